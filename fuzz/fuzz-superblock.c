/* nbdraid fuzz target: the md v1.2 superblock decoder and checks.
 *
 * Input: a flag byte (bit 0: keep sb_csum as given; otherwise it is
 * fixed so the fuzzer gets past the checksum), 8 bytes of member size
 * in bytes (0: the member ends where the superblock's data area does),
 * then the 4 KiB superblock block (zero-extended).
 * Whatever md_sb_decode and md_sb_check accept must re-encode to a
 * block that decodes to the same superblock, and hold its data area
 * inside the member.  A block refused for its checksum alone
 * (md_sb_only_csum_wrong) must be accepted once the checksum is right.
 */
#include <config.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "superblock.h"
#include "check.h"

#define HEAD 9                  /* flags and member size */

/* block was refused: if for its checksum alone, the checksum sb says
 * it expected makes it acceptable. */
static void
check_only_csum_wrong (const uint8_t *block, const struct md_superblock *sb,
                       uint64_t member_bytes)
{
  static uint8_t fixed[MD_SB_BLOCK_BYTES];
  static struct md_superblock sb2;
  bool no_magic;
  char err[512];

  if (!md_sb_only_csum_wrong (block, sb, member_bytes))
    return;
  memcpy (fixed, block, sizeof fixed);
  le32_put (fixed + 216, sb->csum_expected);
  CHECK (md_sb_decode (fixed, &sb2, &no_magic, err, sizeof err) == 0);
  CHECK (md_sb_check (&sb2, member_bytes, err, sizeof err) == 0);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static uint8_t block[MD_SB_BLOCK_BYTES], again[MD_SB_BLOCK_BYTES];
  static struct md_superblock sb, sb2;
  bool no_magic, keep_csum;
  uint64_t member_bytes;
  int decoded;
  char err[512], uuid[36];

  if (size < HEAD)
    return 0;
  keep_csum = data[0] & 1;
  member_bytes = le64_get (data + 1);
  data += HEAD;
  size -= HEAD;
  memset (block, 0, sizeof block);
  memcpy (block, data, size < sizeof block ? size : sizeof block);
  if (!keep_csum)
    le32_put (block + 216, md_sb_checksum (block));

  decoded = md_sb_decode (block, &sb, &no_magic, err, sizeof err);
  if (member_bytes == 0)
    member_bytes = (sb.data_offset_sectors + sb.data_size_sectors) * 512;
  if (decoded == -1) {
    CHECK (err[0] != '\0');
    check_only_csum_wrong (block, &sb, member_bytes);
    return 0;
  }
  CHECK (!no_magic);
  CHECK (sb.max_dev <= MD_SB_MAX_DEV_LIMIT && sb.dev_number < sb.max_dev);
  (void) md_sb_role (&sb);
  md_uuid_format (sb.set_uuid, uuid);
  if (md_sb_check (&sb, member_bytes, err, sizeof err) == -1) {
    CHECK (err[0] != '\0');
    return 0;
  }
  CHECK (sb.data_offset_sectors <= member_bytes / 512);
  CHECK (sb.data_size_sectors <= member_bytes / 512 - sb.data_offset_sectors);
  CHECK (sb.size_sectors <= sb.data_size_sectors);
  CHECK (md_sb_role (&sb) < sb.raid_disks || md_sb_role (&sb) >= MD_ROLE_FAULTY);

  /* Round trip: encode what was accepted; it decodes the same. */
  md_sb_encode (&sb, again);
  CHECK (md_sb_decode (again, &sb2, &no_magic, err, sizeof err) == 0);
  CHECK (md_sb_check (&sb2, member_bytes, err, sizeof err) == 0);
  sb2.sb_csum = sb.sb_csum;
  sb2.csum_expected = sb.csum_expected;
  /* set_name is a NUL-padded string: bytes after a NUL are not kept. */
  CHECK (strcmp (sb.set_name, sb2.set_name) == 0);
  memset (sb.set_name, 0, sizeof sb.set_name);
  memset (sb2.set_name, 0, sizeof sb2.set_name);
  CHECK (memcmp (&sb, &sb2, offsetof (struct md_superblock, dev_roles)) == 0);
  CHECK (memcmp (sb.dev_roles, sb2.dev_roles, 2 * sb.max_dev) == 0);
  return 0;
}
