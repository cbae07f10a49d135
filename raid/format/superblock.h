/* nbdraid: the Linux md v1.2 superblock.
 *
 * Decoded into host-order fields; encode/decode convert to the
 * little-endian on-disk form (md's struct mdp_superblock_1).
 */
#ifndef NBDRAID_SUPERBLOCK_H
#define NBDRAID_SUPERBLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MD_SB_MAGIC 0xa92b4efcU
/* md v1.2: the superblock lives 8 sectors (4 KiB) into the member. */
#define MD_SB_OFFSET_SECTORS 8
#define MD_SB_OFFSET_BYTES (MD_SB_OFFSET_SECTORS * 512)
/* We read and write a whole 4 KiB block so 4K-sector devices work. */
#define MD_SB_BLOCK_BYTES 4096
#define MD_SB_FIXED_BYTES 256
/* mdadm writes 128 role slots; the kernel refuses more than 1920. */
#define MD_SB_DEFAULT_MAX_DEV 128
#define MD_SB_MAX_DEV_LIMIT 1920

#define MD_ROLE_SPARE 0xffff
#define MD_ROLE_FAULTY 0xfffe
#define MD_ROLE_JOURNAL 0xfffd
#define MD_ROLE_MAX 0xff00

/* feature_map bits (md_p.h: MD_FEATURE_*). */
#define MD_FEATURE_BITMAP 0x1
#define MD_FEATURE_RECOVERY_OFFSET 0x2
#define MD_FEATURE_RESHAPE 0x4
#define MD_FEATURE_BAD_BLOCKS 0x8
#define MD_FEATURE_REPLACEMENT 0x10
/* new_offset holds where the data area moves to in a reshape. */
#define MD_FEATURE_NEW_OFFSET 0x40
#define MD_FEATURE_JOURNAL 0x200
#define MD_FEATURE_PPL 0x400
#define MD_FEATURE_MULTIPLE_PPLS 0x800
#define MD_FEATURE_RAID0_LAYOUT 0x1000

#define MD_RESYNC_CLEAN UINT64_MAX

struct md_superblock {
  uint32_t feature_map;
  uint8_t set_uuid[16];
  char set_name[33];            /* NUL-terminated copy of the 32 bytes */
  uint64_t ctime;
  int32_t level;
  uint32_t layout;
  uint64_t size_sectors;        /* sectors of each member used by the array */
  uint32_t chunk_sectors;
  uint32_t raid_disks;
  /* md's union: the bitmap's offset, or with MD_FEATURE_PPL the
   * PPL's offset (low 16 bits, signed) and size (high 16 bits). */
  int32_t bitmap_offset_sectors;
  /* Reshape fields: meaningful with MD_FEATURE_RESHAPE (new_offset with
   * MD_FEATURE_NEW_OFFSET: sectors the data area moves, signed).  We
   * continue only our own kind of reshape (reshape.h). */
  uint32_t new_level;
  uint64_t reshape_position;
  uint32_t delta_disks;
  uint32_t new_layout;
  uint32_t new_chunk;
  uint32_t new_offset;
  uint64_t data_offset_sectors;
  uint64_t data_size_sectors;
  uint64_t super_offset_sectors;
  uint64_t recovery_offset_sectors;
  uint32_t dev_number;
  uint32_t cnt_corrected_read;
  uint8_t device_uuid[16];
  uint8_t devflags;
  uint8_t bblog_shift;
  uint16_t bblog_size;
  uint32_t bblog_offset;
  uint64_t utime;
  uint64_t events;
  uint64_t resync_offset_sectors;
  uint32_t sb_csum;             /* as read; recomputed by encode */
  uint32_t csum_expected;       /* decode: what sb_csum should be */
  uint32_t max_dev;
  uint16_t dev_roles[MD_SB_MAX_DEV_LIMIT];
};

/* Checksum of an encoded superblock (md v1.2: sb_csum covers
 * 256 + 2*max_dev bytes with the csum field taken as zero).
 */
uint32_t md_sb_checksum (const uint8_t *block);

/* Encode into a zeroed MD_SB_BLOCK_BYTES buffer, computing sb_csum. */
void md_sb_encode (const struct md_superblock *sb, uint8_t *block);

/* Decode and validate a superblock block.  Returns 0, or -1 with a
 * one-line reason in err (field name and value).  A block without the
 * magic gives -1 and sets *no_magic so callers can say "no superblock".
 * Every field is decoded before any is checked, so sb holds them all
 * even when the block is refused; the checksum is checked before the
 * fields it covers, so a corrupt byte is reported as a bad checksum,
 * not as the nonsense it makes of its field.
 */
int md_sb_decode (const uint8_t *block, struct md_superblock *sb,
                  bool *no_magic, char *err, size_t errlen);

/* After md_sb_decode refused block (decoding it into sb): is the
 * checksum its only fault, every other check of md_sb_decode and
 * md_sb_check (for a member of member_bytes) passing?  mdadm --examine
 * still shows such a superblock, with the checksum it expected; nothing
 * may assemble from it or write it back.
 */
bool md_sb_only_csum_wrong (const uint8_t *block,
                            const struct md_superblock *sb,
                            uint64_t member_bytes);

/* The bytes of this member's data area the array uses: the superblock's
 * size, or for a RAID0 whose size md left 0 (raid0.c sizes it from the
 * member), the data area rounded down to the chunk. */
uint64_t md_sb_member_bytes (const struct md_superblock *sb);

/* The checks md_sb_decode cannot make alone, as strict as the
 * kernel's super_1_load()/super_1_validate() and md-bitmap.c: a level,
 * layout, raid_disks and chunk we serve, every role below raid_disks
 * (or spare, faulty), the data area inside a member of member_bytes,
 * and an internal bitmap between the superblock and the data.  Returns
 * 0, or -1 with a one-line reason naming the field in err.
 */
int md_sb_check (const struct md_superblock *sb, uint64_t member_bytes,
                 char *err, size_t errlen);

/* The partial parity log (md's ppl.offset and ppl.size, sectors from
 * the superblock's start), when the feature map has one. */
bool md_sb_has_ppl (const struct md_superblock *sb);
/* md's write journal: a journal device (role MD_ROLE_JOURNAL) whose
 * recovery_offset is the log's tail (md's journal_tail). */
bool md_sb_has_journal (const struct md_superblock *sb);
int16_t md_sb_ppl_offset (const struct md_superblock *sb);
uint16_t md_sb_ppl_size (const struct md_superblock *sb);
void md_sb_set_ppl (struct md_superblock *sb, int16_t offset, uint16_t size);

/* Role of this member (dev_roles[dev_number]). */
uint16_t md_sb_role (const struct md_superblock *sb);

/* Now, in md's ctime/utime form. */
uint64_t md_time_now (void);

/* Format a UUID the way mdadm prints it (8:8:8:8 hex). */
void md_uuid_format (const uint8_t uuid[16], char out[36]);

#endif
