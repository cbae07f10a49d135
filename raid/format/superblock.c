/* nbdraid: encode, decode and checksum the md v1.2 superblock.
 *
 * Byte offsets are those of md's struct mdp_superblock_1
 * (include/uapi/linux/raid/md_p.h); the checksum and the checks are
 * drivers/md/md.c's calc_sb_1_csum() and super_1_load().
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "geometry.h"
#include "le.h"
#include "raid.h"
#include "superblock.h"

/* Offsets of the fields in the on-disk superblock. */
enum {
  SB_MAGIC = 0, SB_MAJOR = 4, SB_FEATURES = 8, SB_PAD0 = 12,
  SB_SET_UUID = 16, SB_SET_NAME = 32, SB_CTIME = 64, SB_LEVEL = 72,
  SB_LAYOUT = 76, SB_SIZE = 80, SB_CHUNK = 88, SB_RAID_DISKS = 92,
  SB_BITMAP_OFFSET = 96, SB_NEW_LEVEL = 100, SB_RESHAPE_POS = 104,
  SB_DELTA_DISKS = 112, SB_NEW_LAYOUT = 116, SB_NEW_CHUNK = 120,
  SB_NEW_OFFSET = 124, SB_DATA_OFFSET = 128, SB_DATA_SIZE = 136,
  SB_SUPER_OFFSET = 144, SB_RECOVERY_OFFSET = 152, SB_DEV_NUMBER = 160,
  SB_CNT_CORRECTED = 164, SB_DEVICE_UUID = 168, SB_DEVFLAGS = 184,
  SB_BBLOG_SHIFT = 185, SB_BBLOG_SIZE = 186, SB_BBLOG_OFFSET = 188,
  SB_UTIME = 192, SB_EVENTS = 200, SB_RESYNC_OFFSET = 208, SB_CSUM = 216,
  SB_MAX_DEV = 220, SB_PAD3 = 224, SB_ROLES = 256,
};

/* The feature bits this engine understands well enough to serve. */
#define SUPPORTED_FEATURES                                                     \
  (MD_FEATURE_BITMAP | MD_FEATURE_RECOVERY_OFFSET | MD_FEATURE_RAID0_LAYOUT    \
   | MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS | MD_FEATURE_RESHAPE          \
   | MD_FEATURE_NEW_OFFSET | MD_FEATURE_JOURNAL)

/* Features md knows that we refuse, with the name we report. */
static const struct {
  uint32_t bit;
  const char *name;
} refused_features[] = {
  { MD_FEATURE_BAD_BLOCKS, "a bad-block list with recorded bad blocks" },
  { MD_FEATURE_REPLACEMENT, "a replacement device" },
};

uint32_t
md_sb_checksum (const uint8_t *block)
{
  uint32_t max_dev = le32_get (block + SB_MAX_DEV);
  size_t size, i;
  uint64_t sum = 0;

  if (max_dev > MD_SB_MAX_DEV_LIMIT)
    max_dev = MD_SB_MAX_DEV_LIMIT;
  size = MD_SB_FIXED_BYTES + 2 * (size_t) max_dev;
  for (i = 0; i + 4 <= size; i += 4)
    if (i != SB_CSUM)
      sum += le32_get (block + i);
  if (size - i == 2)
    sum += le16_get (block + i);
  return (uint32_t) ((sum & 0xffffffff) + (sum >> 32));
}

void
md_sb_encode (const struct md_superblock *sb, uint8_t *b)
{
  uint32_t i;

  memset (b, 0, MD_SB_BLOCK_BYTES);
  le32_put (b + SB_MAGIC, MD_SB_MAGIC);
  le32_put (b + SB_MAJOR, 1);
  le32_put (b + SB_FEATURES, sb->feature_map);
  memcpy (b + SB_SET_UUID, sb->set_uuid, 16);
  memcpy (b + SB_SET_NAME, sb->set_name, strnlen (sb->set_name, 32));
  le64_put (b + SB_CTIME, sb->ctime);
  le32_put (b + SB_LEVEL, (uint32_t) sb->level);
  le32_put (b + SB_LAYOUT, sb->layout);
  le64_put (b + SB_SIZE, sb->size_sectors);
  le32_put (b + SB_CHUNK, sb->chunk_sectors);
  le32_put (b + SB_RAID_DISKS, sb->raid_disks);
  le32_put (b + SB_BITMAP_OFFSET, (uint32_t) sb->bitmap_offset_sectors);
  le32_put (b + SB_NEW_LEVEL, sb->new_level);
  le64_put (b + SB_RESHAPE_POS, sb->reshape_position);
  le32_put (b + SB_DELTA_DISKS, sb->delta_disks);
  le32_put (b + SB_NEW_LAYOUT, sb->new_layout);
  le32_put (b + SB_NEW_CHUNK, sb->new_chunk);
  le32_put (b + SB_NEW_OFFSET, sb->new_offset);
  le64_put (b + SB_DATA_OFFSET, sb->data_offset_sectors);
  le64_put (b + SB_DATA_SIZE, sb->data_size_sectors);
  le64_put (b + SB_SUPER_OFFSET, sb->super_offset_sectors);
  le64_put (b + SB_RECOVERY_OFFSET, sb->recovery_offset_sectors);
  le32_put (b + SB_DEV_NUMBER, sb->dev_number);
  le32_put (b + SB_CNT_CORRECTED, sb->cnt_corrected_read);
  memcpy (b + SB_DEVICE_UUID, sb->device_uuid, 16);
  b[SB_DEVFLAGS] = sb->devflags;
  b[SB_BBLOG_SHIFT] = sb->bblog_shift;
  le16_put (b + SB_BBLOG_SIZE, sb->bblog_size);
  le32_put (b + SB_BBLOG_OFFSET, sb->bblog_offset);
  le64_put (b + SB_UTIME, sb->utime);
  le64_put (b + SB_EVENTS, sb->events);
  le64_put (b + SB_RESYNC_OFFSET, sb->resync_offset_sectors);
  le32_put (b + SB_MAX_DEV, sb->max_dev);
  for (i = 0; i < sb->max_dev && i < MD_SB_MAX_DEV_LIMIT; i++)
    le16_put (b + SB_ROLES + 2 * i, sb->dev_roles[i]);
  le32_put (b + SB_CSUM, md_sb_checksum (b));
}

/* Are the n bytes at p all zero (padding a newer md may use)? */
static bool
all_zero (const uint8_t *p, size_t n)
{
  while (n--)
    if (*p++)
      return false;
  return true;
}

/* Every field of the block as written, checking nothing, and the
 * checksum they call for (roles past md's limit are not kept). */
static void
decode_fields (const uint8_t *b, struct md_superblock *sb)
{
  uint32_t i;

  memset (sb, 0, sizeof *sb);
  sb->feature_map = le32_get (b + SB_FEATURES);
  memcpy (sb->set_uuid, b + SB_SET_UUID, 16);
  memcpy (sb->set_name, b + SB_SET_NAME, 32);
  sb->set_name[32] = '\0';
  sb->ctime = le64_get (b + SB_CTIME);
  sb->level = (int32_t) le32_get (b + SB_LEVEL);
  sb->layout = le32_get (b + SB_LAYOUT);
  sb->size_sectors = le64_get (b + SB_SIZE);
  sb->chunk_sectors = le32_get (b + SB_CHUNK);
  sb->raid_disks = le32_get (b + SB_RAID_DISKS);
  sb->bitmap_offset_sectors = (int32_t) le32_get (b + SB_BITMAP_OFFSET);
  sb->new_level = le32_get (b + SB_NEW_LEVEL);
  sb->reshape_position = le64_get (b + SB_RESHAPE_POS);
  sb->delta_disks = le32_get (b + SB_DELTA_DISKS);
  sb->new_layout = le32_get (b + SB_NEW_LAYOUT);
  sb->new_chunk = le32_get (b + SB_NEW_CHUNK);
  sb->new_offset = le32_get (b + SB_NEW_OFFSET);
  sb->data_offset_sectors = le64_get (b + SB_DATA_OFFSET);
  sb->data_size_sectors = le64_get (b + SB_DATA_SIZE);
  sb->super_offset_sectors = le64_get (b + SB_SUPER_OFFSET);
  sb->recovery_offset_sectors = le64_get (b + SB_RECOVERY_OFFSET);
  sb->dev_number = le32_get (b + SB_DEV_NUMBER);
  sb->cnt_corrected_read = le32_get (b + SB_CNT_CORRECTED);
  memcpy (sb->device_uuid, b + SB_DEVICE_UUID, 16);
  sb->devflags = b[SB_DEVFLAGS];
  sb->bblog_shift = b[SB_BBLOG_SHIFT];
  sb->bblog_size = le16_get (b + SB_BBLOG_SIZE);
  sb->bblog_offset = le32_get (b + SB_BBLOG_OFFSET);
  sb->utime = le64_get (b + SB_UTIME);
  sb->events = le64_get (b + SB_EVENTS);
  sb->resync_offset_sectors = le64_get (b + SB_RESYNC_OFFSET);
  sb->sb_csum = le32_get (b + SB_CSUM);
  sb->csum_expected = md_sb_checksum (b);
  sb->max_dev = le32_get (b + SB_MAX_DEV);
  for (i = 0; i < sb->max_dev && i < MD_SB_MAX_DEV_LIMIT; i++)
    sb->dev_roles[i] = le16_get (b + SB_ROLES + 2 * i);
}

/* Is the block an md v1.x superblock whose checksum means something:
 * the magic, major_version 1, and a max_dev (which says how many bytes
 * the checksum covers) that fits the block? */
static int
check_kind (const uint8_t *b, const struct md_superblock *sb,
            bool *no_magic, char *err, size_t errlen)
{
  uint32_t magic = le32_get (b + SB_MAGIC), major = le32_get (b + SB_MAJOR);

  *no_magic = magic != MD_SB_MAGIC;
  if (*no_magic) {
    snprintf (err, errlen, "no md superblock (magic 0x%08x)", magic);
    return -1;
  }
  if (major != 1) {
    snprintf (err, errlen, "major_version %u (only md v1.x is supported)",
              major);
    return -1;
  }
  if (sb->max_dev > MD_SB_MAX_DEV_LIMIT) {
    snprintf (err, errlen, "max_dev %u exceeds %u", sb->max_dev,
              MD_SB_MAX_DEV_LIMIT);
    return -1;
  }
  return 0;
}

/* A reshape in progress: only the kinds nbdraid continues, a RAID4,
 * RAID5 or RAID6 onto as many members or more (a RAID4: a RAID0 that
 * grows as md grows one), its chunk or layout changing or not, its
 * data offset moving back (md without a backup file; the assembly
 * checks that every role moves it alike), or a RAID5 or RAID6 onto
 * fewer members, its data offset moving up (md's backwards reshape);
 * or a RAID10 onto more members or fewer, alike; a moved data offset
 * only with a reshape. */
static int
check_reshape (const struct md_superblock *sb, char *err, size_t errlen)
{
  if (!(sb->feature_map & MD_FEATURE_RESHAPE)) {
    if (!(sb->feature_map & MD_FEATURE_NEW_OFFSET))
      return 0;
    snprintf (err, errlen,
              "feature_map 0x%x: a new data offset without "
              "a reshape is not supported",
              sb->feature_map);
    return -1;
  }
  /* md's check_reshape refuses a journaled array. */
  if (sb->feature_map & MD_FEATURE_JOURNAL) {
    snprintf (err, errlen,
              "feature_map 0x%x: a write journal and a reshape together "
              "(md reshapes no journaled array)",
              sb->feature_map);
    return -1;
  }
  if (sb->level >= 4 && sb->level <= 6 && (int32_t)sb->new_level == sb->level
      && (int32_t)sb->delta_disks >= 0
      && ((int32_t)sb->delta_disks > 0 || sb->new_layout != sb->layout
          || sb->new_chunk != sb->chunk_sectors)
      && (sb->feature_map & MD_FEATURE_NEW_OFFSET)
      && (int32_t)sb->new_offset < 0)
    return 0;
  if ((sb->level == 5 || sb->level == 6) && (int32_t)sb->new_level == sb->level
      && (int32_t)sb->delta_disks < 0
      && (sb->feature_map & MD_FEATURE_NEW_OFFSET)
      && (int32_t)sb->new_offset > 0)
    return 0;
  /* A RAID10 (near or offset: the assembly's geometry checks) onto more
   * members or fewer, its layout and chunk kept. */
  if (sb->level == 10 && sb->new_level == 10 && sb->delta_disks != 0
      && !(((sb->layout >> 8) & 0xff) > 1 && !((sb->layout >> 16) & 1))
      && sb->new_layout == sb->layout && sb->new_chunk == sb->chunk_sectors
      && (sb->feature_map & MD_FEATURE_NEW_OFFSET)
      && ((int32_t)sb->delta_disks > 0) == ((int32_t)sb->new_offset < 0))
    return 0;
  snprintf (err, errlen,
            "feature_map 0x%x: a reshape in progress is not "
            "supported (RAID%d to RAID%u, %d more members, %s: nbdraid "
            "continues only a RAID4, RAID5, RAID6 or RAID10 reshape onto "
            "as many members or more with its data offset moved back, or "
            "a RAID5, RAID6 or RAID10 onto fewer with it moved forward)",
            sb->feature_map, sb->level, sb->new_level, (int32_t)sb->delta_disks,
            !(sb->feature_map & MD_FEATURE_NEW_OFFSET)
                ? "the data offset kept (md with a backup file)"
            : (int32_t)sb->new_offset < 0 ? "the data offset moved back"
                                          : "the data offset moved forward");
  return -1;
}

/* The checks of the fields the checksum covers: the padding a newer md
 * may use, the features we serve, and the kernel's own sanity checks
 * (super_1_load). */
static int
check_fields (const uint8_t *b, const struct md_superblock *sb, char *err,
              size_t errlen)
{
  uint32_t unknown = sb->feature_map & ~SUPPORTED_FEATURES;
  size_t i;

  if (le32_get (b + SB_PAD0) != 0) {
    snprintf (err, errlen, "pad0 is 0x%x, not zero (a newer md feature?)",
              le32_get (b + SB_PAD0));
    return -1;
  }
  if (!all_zero (b + SB_PAD3, 32)) {
    snprintf (err, errlen, "pad3 is not zero (a newer md feature?)");
    return -1;
  }
  for (i = 0; i < sizeof refused_features / sizeof refused_features[0]; i++)
    if (sb->feature_map & refused_features[i].bit) {
      snprintf (err, errlen, "feature_map 0x%x: %s is not supported",
                sb->feature_map, refused_features[i].name);
      return -1;
    }
  if (unknown) {
    snprintf (err, errlen, "feature_map 0x%x: unknown feature bits 0x%x",
              sb->feature_map, unknown);
    return -1;
  }
  if (check_reshape (sb, err, errlen) == -1)
    return -1;
  if (sb->super_offset_sectors != MD_SB_OFFSET_SECTORS) {
    snprintf (err, errlen,
              "super_offset %" PRIu64 " is not %d (only v1.2 metadata, "
              "4 KiB from the start, is supported)",
              sb->super_offset_sectors, MD_SB_OFFSET_SECTORS);
    return -1;
  }
  if (sb->dev_number >= sb->max_dev) {
    snprintf (err, errlen, "dev_number %u is not below max_dev %u",
              sb->dev_number, sb->max_dev);
    return -1;
  }
  /* The kernel only needs data after the superblock's own bytes; we
   * write the superblock as a whole 4 KiB block (4K-sector disks), so
   * data must start after that block. */
  if (sb->data_offset_sectors <
      MD_SB_OFFSET_SECTORS + MD_SB_BLOCK_BYTES / 512) {
    snprintf (err, errlen,
              "data_offset %" PRIu64 " overlaps the superblock",
              sb->data_offset_sectors);
    return -1;
  }
  if (sb->data_size_sectors < 10) {
    snprintf (err, errlen, "data_size %" PRIu64 " is too small",
              sb->data_size_sectors);
    return -1;
  }
  return 0;
}

int
md_sb_decode (const uint8_t *b, struct md_superblock *sb, bool *no_magic,
              char *err, size_t errlen)
{
  decode_fields (b, sb);
  if (check_kind (b, sb, no_magic, err, errlen) == -1)
    return -1;
  if (sb->sb_csum != sb->csum_expected) {
    snprintf (err, errlen, "sb_csum 0x%08x is wrong (expected 0x%08x)",
              sb->sb_csum, sb->csum_expected);
    return -1;
  }
  return check_fields (b, sb, err, errlen);
}

bool
md_sb_only_csum_wrong (const uint8_t *b, const struct md_superblock *sb,
                       uint64_t member_bytes)
{
  char why[256];
  bool no_magic;

  return check_kind (b, sb, &no_magic, why, sizeof why) == 0 &&
    sb->sb_csum != sb->csum_expected &&
    check_fields (b, sb, why, sizeof why) == 0 &&
    md_sb_check (sb, member_bytes, why, sizeof why) == 0;
}

/* Where the internal bitmap may sit: after our 4 KiB superblock block,
 * its 4 KiB header block before the data (md-bitmap.c write_sb_page():
 * "bitmap would overlap data"; the bits are checked when the header's
 * chunk size is known). */
static int
check_bitmap_place (const struct md_superblock *sb, char *err, size_t errlen)
{
  int64_t start = (int64_t) sb->super_offset_sectors +
    sb->bitmap_offset_sectors;

  if (sb->bitmap_offset_sectors < MD_SB_BLOCK_BYTES / 512) {
    snprintf (err, errlen, "bitmap_offset %" PRId32 " puts the bitmap "
              "inside or before the superblock (at least %d)",
              sb->bitmap_offset_sectors, MD_SB_BLOCK_BYTES / 512);
    return -1;
  }
  if ((uint64_t) start + MD_SB_BLOCK_BYTES / 512 > sb->data_offset_sectors) {
    snprintf (err, errlen, "bitmap_offset %" PRId32 " puts the bitmap in "
              "the data, which starts at data_offset %" PRIu64,
              sb->bitmap_offset_sectors, sb->data_offset_sectors);
    return -1;
  }
  return 0;
}

bool
md_sb_has_ppl (const struct md_superblock *sb)
{
  return sb->feature_map & (MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS);
}

int16_t
md_sb_ppl_offset (const struct md_superblock *sb)
{
  return (int16_t)((uint32_t)sb->bitmap_offset_sectors & 0xffff);
}

uint16_t
md_sb_ppl_size (const struct md_superblock *sb)
{
  return (uint16_t)((uint32_t)sb->bitmap_offset_sectors >> 16);
}

void
md_sb_set_ppl (struct md_superblock *sb, int16_t offset, uint16_t size)
{
  sb->bitmap_offset_sectors
      = (int32_t)((uint32_t)(uint16_t)offset | (uint32_t)size << 16);
}

/* md's ppl_init_log() and ppl_validate_rdev(): PPL is RAID5's alone,
 * excludes a bitmap, and its area (a header and at least one 4 KiB
 * block) lies after the superblock block and before the data. */
static int
check_ppl_place (const struct md_superblock *sb, char *err, size_t errlen)
{
  int16_t off = md_sb_ppl_offset (sb);
  uint16_t size = md_sb_ppl_size (sb);

  if (sb->level != 5) {
    snprintf (err, errlen,
              "feature_map 0x%x: a partial parity log on "
              "level %" PRId32 " (md keeps one for RAID5 only)",
              sb->feature_map, sb->level);
    return -1;
  }
  if (sb->feature_map & (MD_FEATURE_BITMAP | MD_FEATURE_RESHAPE)) {
    snprintf (err, errlen,
              "feature_map 0x%x: a partial parity log and a %s together "
              "(md refuses both)",
              sb->feature_map,
              sb->feature_map & MD_FEATURE_BITMAP ? "bitmap" : "reshape");
    return -1;
  }
  if (off < MD_SB_BLOCK_BYTES / 512 || size < 16
      || sb->super_offset_sectors + off + size > sb->data_offset_sectors) {
    snprintf (err, errlen,
              "ppl offset %d size %u sectors: not between the "
              "superblock and the data at %" PRIu64 " with room for a "
              "header and a block",
              off, size, sb->data_offset_sectors);
    return -1;
  }
  return 0;
}

/* md journals RAID4/5/6 (raid5-cache.c r5l_init_log) and never beside a
 * bitmap or a partial parity log (raid5.c raid5_run). */
static int
check_journal (const struct md_superblock *sb, char *err, size_t errlen)
{
  if (sb->level < 4 || sb->level > 6) {
    snprintf (err, errlen,
              "feature_map 0x%x: a write journal on level %" PRId32
              " (md journals RAID4/5/6 only)",
              sb->feature_map, sb->level);
    return -1;
  }
  if (sb->feature_map & (MD_FEATURE_BITMAP | MD_FEATURE_PPL)) {
    snprintf (err, errlen,
              "feature_map 0x%x: a write journal with a %s (md refuses "
              "both)",
              sb->feature_map,
              sb->feature_map & MD_FEATURE_BITMAP ? "bitmap"
                                                  : "partial parity log");
    return -1;
  }
  return 0;
}

bool
md_sb_has_journal (const struct md_superblock *sb)
{
  return sb->feature_map & MD_FEATURE_JOURNAL;
}

uint64_t
md_sb_member_bytes (const struct md_superblock *sb)
{
  const struct raid_level *l = raid_level_find (sb->level);
  uint64_t chunk = (uint64_t) sb->chunk_sectors * 512, bytes;

  /* A zoned level (md's RAID0) may record no used size: it uses each
   * member's whole data area, in whole chunks. */
  if (!l || !l->zoned || sb->size_sectors != 0 || chunk == 0 ||
      sb->data_size_sectors > UINT64_MAX / 512)
    return sb->size_sectors * 512;
  bytes = sb->data_size_sectors * 512;
  return bytes - bytes % chunk;
}

int
md_sb_check (const struct md_superblock *sb, uint64_t member_bytes,
             char *err, size_t errlen)
{
  struct raid_geometry g = {
    .level = sb->level, .layout = sb->layout, .members = sb->raid_disks,
    .chunk_bytes = (uint64_t) sb->chunk_sectors * 512,
    .member_bytes = md_sb_member_bytes (sb),
  };
  uint64_t member_sectors = member_bytes / 512;
  uint32_t i, roles = sb->raid_disks;
  char why[160];

  if (sb->size_sectors > UINT64_MAX / 512 ||
      geometry_init (&g, why, sizeof why) == -1) {
    snprintf (err, errlen, "level %" PRId32 ", layout %" PRIu32
              ", raid_disks %" PRIu32 ", chunksize %" PRIu32 ", size %"
              PRIu64 ": %s", sb->level, sb->layout, sb->raid_disks,
              sb->chunk_sectors, sb->size_sectors,
              sb->size_sectors > UINT64_MAX / 512 ? "size overflows" : why);
    return -1;
  }
  /* A shrink under way: the roles it drops hold data until it ends. */
  if ((sb->feature_map & MD_FEATURE_RESHAPE) && (int32_t)sb->delta_disks < 0)
    roles += (uint32_t)-(int32_t)sb->delta_disks;
  for (i = 0; i < sb->max_dev; i++)
    if (sb->dev_roles[i] >= roles && sb->dev_roles[i] != MD_ROLE_SPARE
        && sb->dev_roles[i] != MD_ROLE_FAULTY
        && !(sb->dev_roles[i] == MD_ROLE_JOURNAL
             && (sb->feature_map & MD_FEATURE_JOURNAL))) {
      snprintf (err, errlen,
                "dev_roles[%" PRIu32 "] 0x%x is neither a "
                "role below %" PRIu32 " nor spare or faulty%s",
                i, sb->dev_roles[i], roles,
                sb->dev_roles[i] == MD_ROLE_JOURNAL ? " (a journal without "
                                                      "md's journal feature)"
                                                    : "");
      return -1;
    }
  if ((sb->feature_map & MD_FEATURE_JOURNAL)
      && check_journal (sb, err, errlen) == -1)
    return -1;
  /* A journal device records the members' size (mdadm compares it on
   * every device), not one of its own. */
  if (sb->size_sectors > sb->data_size_sectors
      && md_sb_role (sb) != MD_ROLE_JOURNAL) {
    snprintf (err, errlen, "size %" PRIu64 " exceeds data_size %" PRIu64,
              sb->size_sectors, sb->data_size_sectors);
    return -1;
  }
  /* md super_1_load(): the data area must lie inside the device. */
  if (sb->data_offset_sectors > member_sectors ||
      sb->data_size_sectors > member_sectors - sb->data_offset_sectors) {
    snprintf (err, errlen, "member too small: data_offset %" PRIu64
              " + data_size %" PRIu64 " sectors end past its %" PRIu64
              " sectors", sb->data_offset_sectors, sb->data_size_sectors,
              member_sectors);
    return -1;
  }
  if (md_sb_has_ppl (sb))
    return check_ppl_place (sb, err, errlen);
  if ((sb->feature_map & MD_FEATURE_BITMAP) &&
      check_bitmap_place (sb, err, errlen) == -1)
    return -1;
  return 0;
}

uint16_t
md_sb_role (const struct md_superblock *sb)
{
  return sb->dev_roles[sb->dev_number];
}

void
md_uuid_format (const uint8_t u[16], char out[36])
{
  snprintf (out, 36,
            "%02x%02x%02x%02x:%02x%02x%02x%02x:"
            "%02x%02x%02x%02x:%02x%02x%02x%02x",
            u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
            u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

uint64_t
md_time_now (void)
{
  struct timespec ts;

  /* md keeps 40 bits of seconds and 24 of microseconds. */
  clock_gettime (CLOCK_REALTIME, &ts);
  return ((uint64_t) ts.tv_sec & ((1ULL << 40) - 1)) |
    ((uint64_t) (ts.tv_nsec / 1000) << 40);
}
