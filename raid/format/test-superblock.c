/* nbdraid: test md_sb_encode, md_sb_decode, md_sb_checksum and
 * md_sb_only_csum_wrong.
 *
 * The layout and the checksum rule are md's struct mdp_superblock_1
 * (include/uapi/linux/raid/md_p.h) and calc_sb_1_csum() (drivers/md/
 * md.c); the checksum here is written independently of the engine's.
 */
#include <config.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "superblock.h"
#include "test-report.h"

#define CSUM_OFFSET 216
/* The feature_map of full_superblock: only bits the engine serves. */
#define FULL_FEATURES \
  (MD_FEATURE_BITMAP | MD_FEATURE_RECOVERY_OFFSET | MD_FEATURE_RAID0_LAYOUT)


/* md v1.2: with sb_csum taken as zero, add the u32 words of the first
 * 256 + 2*max_dev bytes into 64 bits (a trailing 2 bytes as a u16),
 * then fold the carry back in. */
static uint32_t
reference_checksum (const uint8_t *block)
{
  uint8_t copy[MD_SB_BLOCK_BYTES];
  size_t size = 256 + 2 * (size_t) le32_get (block + 220), i;
  uint64_t sum = 0;

  memcpy (copy, block, sizeof copy);
  memset (copy + CSUM_OFFSET, 0, 4);
  for (i = 0; size - i >= 4; i += 4)
    sum += le32_get (copy + i);
  if (size - i == 2)
    sum += le16_get (copy + i);
  return (uint32_t) ((sum & 0xffffffff) + (sum >> 32));
}

static void
store_reference_checksum (uint8_t *block)
{
  le32_put (block + CSUM_OFFSET, reference_checksum (block));
}

/* A superblock with every field set to a distinct, mostly large value
 * (large values make the checksum carry past 32 bits). */
static void
full_superblock (struct md_superblock *sb, uint32_t max_dev)
{
  uint32_t i;

  memset (sb, 0, sizeof *sb);
  sb->feature_map = FULL_FEATURES;
  for (i = 0; i < 16; i++) {
    sb->set_uuid[i] = (uint8_t) (0xf0 + i);
    sb->device_uuid[i] = (uint8_t) (0x11 * i + 3);
  }
  memcpy (sb->set_name, "nbdraid-host:a-name-of-32-bytes!", 32);
  sb->ctime = 0x123456789abcULL | (999999ULL << 40);
  sb->level = 6;
  sb->layout = 3;
  sb->size_sectors = 0xfedcba9876ULL;
  sb->chunk_sectors = 0x80000;
  sb->raid_disks = 17;
  sb->bitmap_offset_sectors = -1234567;
  sb->new_level = 0xfffffff5;
  sb->reshape_position = 0xf1f2f3f4f5f6f7f8ULL;
  sb->delta_disks = 0xfffffffe;
  sb->new_layout = 0xfffff002;
  sb->new_chunk = 0xffff0400;
  sb->new_offset = 0xfffffc00;
  sb->data_offset_sectors = 264192;
  sb->data_size_sectors = 0xfffffffff0ULL;
  sb->super_offset_sectors = MD_SB_OFFSET_SECTORS;
  sb->recovery_offset_sectors = 0xeeeeeeeeeeULL;
  sb->dev_number = max_dev - 1;
  sb->cnt_corrected_read = 0xfffffff1;
  sb->devflags = 3;
  sb->bblog_shift = 9;
  sb->bblog_size = 0xfff8;
  sb->bblog_offset = 0xfffffff0;
  sb->utime = 0xabcdef012345ULL | (123456ULL << 40);
  sb->events = 0xfffffffffffffff0ULL;
  sb->resync_offset_sectors = MD_RESYNC_CLEAN;
  sb->max_dev = max_dev;
  for (i = 0; i < max_dev; i++)
    sb->dev_roles[i] = i < 20 ? (uint16_t) i
      : i % 3 == 0 ? MD_ROLE_FAULTY : i % 3 == 1 ? MD_ROLE_SPARE
      : (uint16_t) (MD_ROLE_MAX - i);
  /* The last slot, whose role md_sb_role reports, is faulty. */
  sb->dev_roles[max_dev - 1] = MD_ROLE_FAULTY;
}

/* md_sb_decode with err cleared and *no_magic preset to `preset`, so
 * a decoder that leaves it alone is caught. */
static int
decode (const uint8_t *block, struct md_superblock *sb, bool *no_magic,
        bool preset, char *err, size_t errlen)
{
  err[0] = '\0';
  *no_magic = preset;
  return md_sb_decode (block, sb, no_magic, err, errlen);
}

/* ---- round trip --------------------------------------------------- */

#define SAME(field)                                                     \
  do {                                                                  \
    if (a->field != b->field)                                           \
      fail ("max_dev %u: %s is 0x%" PRIx64 " after the round trip, "    \
            "was 0x%" PRIx64, a->max_dev, #field, (uint64_t) b->field,  \
            (uint64_t) a->field);                                       \
  } while (0)

static void
compare_superblocks (const struct md_superblock *a,
                     const struct md_superblock *b)
{
  uint32_t i;

  SAME (feature_map);
  SAME (ctime);
  SAME (level);
  SAME (layout);
  SAME (size_sectors);
  SAME (chunk_sectors);
  SAME (raid_disks);
  SAME (bitmap_offset_sectors);
  SAME (new_level);
  SAME (reshape_position);
  SAME (delta_disks);
  SAME (new_layout);
  SAME (new_chunk);
  SAME (new_offset);
  SAME (data_offset_sectors);
  SAME (data_size_sectors);
  SAME (super_offset_sectors);
  SAME (recovery_offset_sectors);
  SAME (dev_number);
  SAME (cnt_corrected_read);
  SAME (devflags);
  SAME (bblog_shift);
  SAME (bblog_size);
  SAME (bblog_offset);
  SAME (utime);
  SAME (events);
  SAME (resync_offset_sectors);
  SAME (max_dev);
  if (memcmp (a->set_uuid, b->set_uuid, 16) != 0)
    fail ("max_dev %u: set_uuid changed in the round trip", a->max_dev);
  if (memcmp (a->device_uuid, b->device_uuid, 16) != 0)
    fail ("max_dev %u: device_uuid changed in the round trip", a->max_dev);
  if (strcmp (a->set_name, b->set_name) != 0)
    fail ("max_dev %u: set_name is \"%s\" after the round trip, was "
          "\"%s\"", a->max_dev, b->set_name, a->set_name);
  for (i = 0; i < a->max_dev; i++)
    if (a->dev_roles[i] != b->dev_roles[i]) {
      fail ("max_dev %u: dev_roles[%u] is 0x%x after the round trip, was "
            "0x%x", a->max_dev, i, b->dev_roles[i], a->dev_roles[i]);
      break;
    }
}

static void
check_round_trip (uint32_t max_dev)
{
  static struct md_superblock in, out;
  uint8_t block[MD_SB_BLOCK_BYTES];
  size_t end = 256 + 2 * (size_t) max_dev, i;
  bool no_magic;
  char err[256];

  full_superblock (&in, max_dev);
  md_sb_encode (&in, block);
  if (le32_get (block + CSUM_OFFSET) != reference_checksum (block))
    fail ("max_dev %u: encoded sb_csum 0x%08x, reference 0x%08x", max_dev,
          le32_get (block + CSUM_OFFSET), reference_checksum (block));
  if (md_sb_checksum (block) != reference_checksum (block))
    fail ("max_dev %u: md_sb_checksum is 0x%08x, reference 0x%08x", max_dev,
          md_sb_checksum (block), reference_checksum (block));
  for (i = end; i < MD_SB_BLOCK_BYTES; i++)
    if (block[i]) {
      fail ("max_dev %u: byte %zu past the roles is 0x%02x", max_dev, i,
            block[i]);
      break;
    }
  if (decode (block, &out, &no_magic, true, err, sizeof err) != 0) {
    fail ("max_dev %u: decoding the encoded superblock failed: %s",
          max_dev, err);
    return;
  }
  compare_superblocks (&in, &out);
  if (out.sb_csum != reference_checksum (block))
    fail ("max_dev %u: decoded sb_csum 0x%08x, reference 0x%08x", max_dev,
          out.sb_csum, reference_checksum (block));
  if (md_sb_role (&out) != MD_ROLE_FAULTY)
    fail ("max_dev %u: md_sb_role is 0x%x, want 0x%x", max_dev,
          md_sb_role (&out), MD_ROLE_FAULTY);
}

/* ---- golden bytes ------------------------------------------------- */

static void
check_golden (void)
{
  static const struct {
    size_t offset;
    const char *field;
    size_t len;
    const char *bytes;
  } golden[] = {
    { 0, "magic", 4, "\xfc\x4e\x2b\xa9" },
    { 4, "major_version", 4, "\x01\x00\x00\x00" },
    { 8, "feature_map", 4, "\x01\x10\x00\x00" },
    { 12, "pad0", 4, "\x00\x00\x00\x00" },
    { 16, "set_uuid", 4, "\xde\xad\xbe\xef" },
    { 32, "set_name", 6, "golden" },
    { 38, "set_name padding", 2, "\x00\x00" },
    { 64, "ctime", 8, "\x00\x5e\xd0\xb2\x00\x40\x42\x0f" },
    { 72, "level", 4, "\x06\x00\x00\x00" },
    { 76, "layout", 4, "\x02\x00\x00\x00" },
    { 80, "size", 8, "\x00\x00\x20\x00\x00\x00\x00\x00" },
    { 88, "chunksize", 4, "\x00\x04\x00\x00" },
    { 92, "raid_disks", 4, "\x04\x00\x00\x00" },
    { 96, "bitmap_offset", 4, "\x08\x00\x00\x00" },
    { 128, "data_offset", 8, "\x00\x08\x04\x00\x00\x00\x00\x00" },
    { 136, "data_size", 8, "\x00\x00\x30\x00\x00\x00\x00\x00" },
    { 144, "super_offset", 8, "\x08\x00\x00\x00\x00\x00\x00\x00" },
    { 160, "dev_number", 4, "\x02\x00\x00\x00" },
    { 168, "device_uuid", 4, "\xca\xfe\xf0\x0d" },
    { 184, "devflags", 1, "\x01" },
    { 200, "events", 8, "\x08\x07\x06\x05\x04\x03\x02\x01" },
    { 208, "resync_offset", 8, "\xff\xff\xff\xff\xff\xff\xff\xff" },
    { 220, "max_dev", 4, "\x80\x00\x00\x00" },
    { 256, "dev_roles", 8, "\x00\x00\x01\x00\x03\x00\xfe\xff" },
    { 264, "dev_roles[4]", 2, "\xff\xff" },
  };
  struct md_superblock sb;
  uint8_t block[MD_SB_BLOCK_BYTES];
  size_t i, j;

  memset (&sb, 0, sizeof sb);
  sb.feature_map = MD_FEATURE_BITMAP | MD_FEATURE_RAID0_LAYOUT;
  memcpy (sb.set_uuid, "\xde\xad\xbe\xef", 4);
  strcpy (sb.set_name, "golden");
  sb.ctime = 3000000000ULL | (1000000ULL << 40);
  sb.level = 6;
  sb.layout = 2;
  sb.size_sectors = 0x200000;
  sb.chunk_sectors = 1024;
  sb.raid_disks = 4;
  sb.bitmap_offset_sectors = 8;
  sb.data_offset_sectors = 264192;
  sb.data_size_sectors = 0x300000;
  sb.super_offset_sectors = 8;
  sb.dev_number = 2;
  memcpy (sb.device_uuid, "\xca\xfe\xf0\x0d", 4);
  sb.devflags = 1;
  sb.events = 0x0102030405060708ULL;
  sb.resync_offset_sectors = MD_RESYNC_CLEAN;
  sb.max_dev = 128;
  sb.dev_roles[0] = 0;
  sb.dev_roles[1] = 1;
  sb.dev_roles[2] = 3;
  sb.dev_roles[3] = MD_ROLE_FAULTY;
  for (i = 4; i < 128; i++)
    sb.dev_roles[i] = MD_ROLE_SPARE;
  md_sb_encode (&sb, block);

  for (i = 0; i < sizeof golden / sizeof golden[0]; i++)
    for (j = 0; j < golden[i].len; j++)
      if (block[golden[i].offset + j] != (uint8_t) golden[i].bytes[j]) {
        fail ("golden: %s byte %zu (offset %zu) is 0x%02x, want 0x%02x",
              golden[i].field, j, golden[i].offset + j,
              block[golden[i].offset + j], (uint8_t) golden[i].bytes[j]);
        break;
      }
  for (i = 224; i < 256; i++)
    if (block[i]) {
      fail ("golden: pad3 byte %zu is 0x%02x", i, block[i]);
      break;
    }
  if (le32_get (block + CSUM_OFFSET) != reference_checksum (block))
    fail ("golden: sb_csum 0x%08x, reference 0x%08x",
          le32_get (block + CSUM_OFFSET), reference_checksum (block));
}

/* ---- checksum corner cases ---------------------------------------- */

/* Odd max_dev leaves a trailing u16; 1920 covers the whole block. */
static unsigned
check_checksums (void)
{
  static const uint32_t max_devs[] = { 1, 127, 128, 129, 384, 1919, 1920 };
  static struct md_superblock sb;
  uint8_t block[MD_SB_BLOCK_BYTES];
  size_t i;

  for (i = 0; i < sizeof max_devs / sizeof max_devs[0]; i++) {
    full_superblock (&sb, max_devs[i]);
    md_sb_encode (&sb, block);
    if (md_sb_checksum (block) != reference_checksum (block))
      fail ("max_dev %u: md_sb_checksum 0x%08x, reference 0x%08x",
            max_devs[i], md_sb_checksum (block), reference_checksum (block));
  }
  return sizeof max_devs / sizeof max_devs[0];
}

/* ---- refusals ----------------------------------------------------- */

/* Each stores one value into a good block; fix_csum says whether to
 * recompute sb_csum afterwards so only the intended fault remains. */
struct refusal {
  const char *what;
  const char *field;            /* must appear in the error message */
  size_t offset, width;
  uint64_t value;
  bool fix_csum;
};

static const struct refusal refusals[] = {
  { "bad magic", "magic", 0, 4, 0xa92b4efd, true },
  { "major_version 2", "major_version", 4, 4, 2, true },
  { "a wrong sb_csum", "sb_csum", CSUM_OFFSET, 4, 0x12345678, false },
  { "events changed without a new sb_csum", "sb_csum", 200, 8, 7, false },
  { "non-zero pad0", "pad0", 12, 4, 0x100, true },
  { "non-zero pad3", "pad3", 252, 4, 0x1000000, true },
  { "unknown feature bit 0x80000", "feature_map", 8, 4,
    FULL_FEATURES | 0x80000, true },
  { "the reshape feature bit", "reshape", 8, 4,
    FULL_FEATURES | MD_FEATURE_RESHAPE, true },
  /* 256 + 2*1921 bytes do not fit the block: no checksum to fix */
  { "max_dev 1921", "max_dev", 220, 4, 1921, false },
  { "super_offset 0", "super_offset", 144, 8, 0, true },
  { "super_offset 2048", "super_offset", 144, 8, 2048, true },
  { "dev_number 128 with max_dev 128", "dev_number", 160, 4, 128, true },
  { "data_offset 0", "data_offset", 128, 8, 0, true },
  { "data_offset 8 (the superblock itself)", "data_offset", 128, 8, 8,
    true },
  { "data_offset 12 (inside the 4K superblock block)", "data_offset", 128,
    8, 12, true },
};
#define N_REFUSALS (sizeof refusals / sizeof refusals[0])

static unsigned
check_refusals (void)
{
  static char messages[N_REFUSALS][256];
  static struct md_superblock sb, out;
  uint8_t good[MD_SB_BLOCK_BYTES], block[MD_SB_BLOCK_BYTES];
  bool no_magic;
  size_t i, j;

  full_superblock (&sb, 128);
  sb.data_offset_sectors = 16;  /* the smallest that is outside */
  md_sb_encode (&sb, good);
  if (decode (good, &out, &no_magic, true, messages[0],
              sizeof messages[0]) != 0 || no_magic)
    fail ("the undamaged superblock is refused or flagged no_magic: %s",
          messages[0]);

  for (i = 0; i < N_REFUSALS; i++) {
    const struct refusal *r = &refusals[i];
    bool want_no_magic = strcmp (r->field, "magic") == 0;
    size_t b;

    memcpy (block, good, sizeof block);
    for (b = 0; b < r->width; b++)
      block[r->offset + b] = (uint8_t) (r->value >> (8 * b));
    if (r->fix_csum)
      store_reference_checksum (block);
    if (memcmp (block, good, sizeof block) == 0)
      abort ();                 /* the damage must change something */
    if (decode (block, &out, &no_magic, !want_no_magic, messages[i],
                sizeof messages[i]) == 0) {
      fail ("decode accepted %s", r->what);
      continue;
    }
    if (!strstr (messages[i], r->field))
      fail ("decode refused %s, but the message does not name %s: \"%s\"",
            r->what, r->field, messages[i]);
    if (no_magic != want_no_magic)
      fail ("decode refused %s with no_magic %s", r->what,
            no_magic ? "set" : "clear");
    for (j = 0; j < i; j++)
      if (strcmp (refusals[j].field, r->field) != 0 &&
          strcmp (messages[j], messages[i]) == 0)
        fail ("decode gives %s and %s the same message: \"%s\"",
              refusals[j].what, r->what, messages[i]);
  }
  return N_REFUSALS;
}

/* ---- md_sb_check -------------------------------------------------- */

/* A sane RAID6 superblock, then one field wrong at a time: each is
 * refused with a message naming the field. */
static void
sane_superblock (struct md_superblock *sb)
{
  uint32_t i;

  memset (sb, 0, sizeof *sb);
  sb->feature_map = MD_FEATURE_BITMAP;
  sb->level = 6;
  sb->layout = 2;
  sb->raid_disks = 4;
  sb->chunk_sectors = 1024;
  sb->size_sectors = 0x200000;
  sb->bitmap_offset_sectors = 8;
  sb->data_offset_sectors = 264192;
  sb->data_size_sectors = 0x300000;
  sb->super_offset_sectors = MD_SB_OFFSET_SECTORS;
  sb->max_dev = 128;
  for (i = 0; i < 128; i++)
    sb->dev_roles[i] = i < 4 ? (uint16_t) i : MD_ROLE_SPARE;
  sb->dev_roles[5] = MD_ROLE_FAULTY;
}

/* Fault i of check_semantics, with what it is and the field the
 * message must name; false past the last. */
static bool
spoil (size_t i, struct md_superblock *sb, const char **what,
       const char **field)
{
#define FAULT(w, f, stmt) *what = w, *field = f, stmt; return true
  switch (i) {
  case 0:
    FAULT ("level 3", "RAID level 3", sb->level = 3);
  case 1: FAULT ("RAID6 layout 7", "layout 7", sb->layout = 7);
  case 2: FAULT ("raid_disks 3 for RAID6", "raid_disks 3",
                 sb->raid_disks = 3);
  case 3: FAULT ("raid_disks 0", "raid_disks 0", sb->raid_disks = 0);
  case 4: FAULT ("chunk 1000 sectors", "chunk", sb->chunk_sectors = 1000);
  case 5: FAULT ("a role of 9 in 4 disks", "dev_roles[7]",
                 sb->dev_roles[7] = 9);
  case 6: FAULT ("the journal role", "dev_roles[6]",
                 sb->dev_roles[6] = MD_ROLE_JOURNAL);
  case 7: FAULT ("size past data_size", "data_size",
                 sb->size_sectors = 0x400000);
  case 8: FAULT ("data_size past the member", "data_offset",
                 sb->data_size_sectors = 0x300001);
  case 9: FAULT ("the bitmap in the superblock", "bitmap_offset",
                 sb->bitmap_offset_sectors = 4);
  case 10: FAULT ("the bitmap before the superblock", "bitmap_offset",
                  sb->bitmap_offset_sectors = -16);
  case 11: FAULT ("the bitmap header in the data", "bitmap_offset",
                  sb->bitmap_offset_sectors = 264192 - 8 - 7);
  case 12:
    FAULT ("a journal beside the bitmap", "write journal with a bitmap",
           sb->feature_map |= MD_FEATURE_JOURNAL);
  case 13:
    FAULT ("a journal on RAID10", "write journal on level 10",
           (sb->feature_map = MD_FEATURE_JOURNAL, sb->level = 10,
            sb->layout = 0x102));
  default:
    return false;
  }
#undef FAULT
}

static unsigned
check_semantics (void)
{
  static struct md_superblock sb;
  uint64_t member_bytes = (264192 + 0x300000ULL) * 512;
  const char *what, *field;
  char err[256];
  size_t i;

  sane_superblock (&sb);
  if (md_sb_check (&sb, member_bytes, err, sizeof err) != 0)
    fail ("md_sb_check refused the sane superblock: %s", err);
  sb.feature_map = 0;
  sb.bitmap_offset_sectors = -16;       /* no bitmap: not looked at */
  if (md_sb_check (&sb, member_bytes, err, sizeof err) != 0)
    fail ("md_sb_check looked at bitmap_offset without a bitmap: %s", err);
  /* A journal device carries the members' size, past its own data
   * (mdadm compares size on every device). */
  sb.feature_map = MD_FEATURE_JOURNAL;
  sb.dev_number = 6;
  sb.dev_roles[6] = MD_ROLE_JOURNAL;
  sb.data_size_sectors = 0x1000;
  if (md_sb_check (&sb, member_bytes, err, sizeof err) != 0)
    fail ("md_sb_check refused a journal device: %s", err);
  for (i = 0;; i++) {
    sane_superblock (&sb);
    if (!spoil (i, &sb, &what, &field))
      break;
    err[0] = '\0';
    if (md_sb_check (&sb, member_bytes, err, sizeof err) == 0)
      fail ("md_sb_check accepted %s", what);
    else if (!strstr (err, field))
      fail ("md_sb_check refused %s, but the message does not name %s: "
            "\"%s\"", what, field, err);
  }
  return (unsigned) i;
}

/* ---- a wrong checksum alone ------------------------------------- */

/* The sane superblock, encoded, with byte `at` changed to `value` (the
 * checksum left as it was unless fix_csum); sb gets what it says. */
static void
damaged_block (uint8_t *block, struct md_superblock *sb, size_t at,
               uint8_t value, bool fix_csum)
{
  sane_superblock (sb);
  md_sb_encode (sb, block);
  block[at] = value;
  if (fix_csum)
    store_reference_checksum (block);
}

/* A byte of events changed, the checksum not: decode refuses it for
 * the checksum, yet every field is decoded, with the checksum it
 * should have; md_sb_only_csum_wrong says so, and says no when there
 * is another fault, or none, or no superblock. */
static unsigned
check_bad_checksum (void)
{
  static const struct {
    const char *what;
    size_t at;
    uint8_t value;
    bool fix_csum, only_csum;
  } cases[] = {
    { "a byte of events changed", 200, 0x42, false, true },
    { "a byte of pad0 changed too", 12, 1, false, false },
    { "level 3 (md_sb_check refuses it)", 72, 3, false, false },
    { "no fault at all", 200, 0, false, false },
    { "pad0 with a right checksum", 12, 1, true, false },
    { "no magic", 0, 0, false, false },
  };
  static struct md_superblock in, out;
  uint64_t member_bytes = (264192 + 0x300000ULL) * 512;
  uint8_t block[MD_SB_BLOCK_BYTES];
  uint32_t written;
  bool no_magic;
  char err[256];
  size_t i;

  damaged_block (block, &in, 200, 0x42, false);
  written = le32_get (block + CSUM_OFFSET);
  in.events = 0x42;
  if (decode (block, &out, &no_magic, true, err, sizeof err) == 0)
    fail ("decode accepted a superblock with a wrong checksum");
  else if (!strstr (err, "sb_csum") || no_magic)
    fail ("decode refused a wrong checksum, but not for it: \"%s\"%s",
          err, no_magic ? " (no_magic set)" : "");
  compare_superblocks (&in, &out);
  if (out.sb_csum != written)
    fail ("a wrong checksum: sb_csum 0x%08x, written 0x%08x", out.sb_csum,
          written);
  if (out.csum_expected != reference_checksum (block) ||
      out.csum_expected == written)
    fail ("a wrong checksum: csum_expected 0x%08x, reference 0x%08x",
          out.csum_expected, reference_checksum (block));

  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    damaged_block (block, &in, cases[i].at, cases[i].value,
                   cases[i].fix_csum);
    if (decode (block, &out, &no_magic, false, err, sizeof err) == 0) {
      if (cases[i].only_csum ||
          md_sb_only_csum_wrong (block, &out, member_bytes))
        fail ("%s: decode accepted it, or md_sb_only_csum_wrong said yes",
              cases[i].what);
      continue;
    }
    if (!cases[i].fix_csum && !no_magic && !strstr (err, "sb_csum"))
      fail ("%s: the checksum is not the fault reported: \"%s\"",
            cases[i].what, err);
    if (md_sb_only_csum_wrong (block, &out, member_bytes) !=
        cases[i].only_csum)
      fail ("%s: md_sb_only_csum_wrong says %s", cases[i].what,
            cases[i].only_csum ? "no" : "yes");
  }
  return sizeof cases / sizeof cases[0];
}

int
main (void)
{
  unsigned checksums, refused, semantic, bad_csum;

  check_round_trip (128);
  check_round_trip (384);
  check_golden ();
  checksums = check_checksums ();
  refused = check_refusals ();
  semantic = check_semantics ();
  bad_csum = check_bad_checksum ();
  if (failures) {
    printf ("test-superblock: %u failures\n", failures);
    return EXIT_FAILURE;
  }
  printf ("test-superblock: round trip of every field (max_dev 128, 384), "
          "golden bytes at md's offsets, %u checksums match the reference, "
          "%u kinds of damage refused with distinct messages, %u "
          "inconsistent superblocks refused by md_sb_check, a wrong "
          "checksum decoded in full, md_sb_only_csum_wrong right in %u "
          "cases\n", checksums, refused, semantic, bad_csum);
  return EXIT_SUCCESS;
}
