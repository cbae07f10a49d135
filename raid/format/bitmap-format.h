/* nbdraid: md's internal write-intent bitmap, on disk.
 *
 * md v1.2: the bitmap starts bitmap_offset sectors after the superblock
 * (8, so 8 KiB into the member): a 256-byte header, then one bit per
 * bitmap chunk of the array's sync space (the member data area for
 * RAID1/4/5/6, the array for RAID10), little-endian bit order, 1 =
 * dirty.  Every member holds the same bitmap.  md's bitmap_super_t
 * (drivers/md/md-bitmap.h) and md_bitmap_read_sb() (md-bitmap.c).
 */
#ifndef NBDRAID_BITMAP_FORMAT_H
#define NBDRAID_BITMAP_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MD_BITMAP_MAGIC 0x6d746962U
#define MD_BITMAP_VERSION 4
#define MD_BITMAP_HEADER_BYTES 256
/* md's bitmap state bits */
#define MD_BITMAP_STALE (1U << 1)
#define MD_BITMAP_WRITE_ERROR (1U << 2)
/* md v1.2: bitmap_offset in the superblock, sectors after it. */
#define MD_BITMAP_OFFSET_SECTORS 8

struct md_bitmap_header {
  uint8_t uuid[16];
  uint64_t events;
  uint64_t events_cleared;
  uint64_t sync_size_sectors;
  uint32_t state;
  uint32_t chunk_bytes;
  uint32_t daemon_sleep_s;
  uint32_t write_behind;
  uint32_t sectors_reserved;
};

void md_bitmap_encode (const struct md_bitmap_header *h, uint8_t *block);
/* Decode and validate as md_bitmap_read_sb() does: magic, version 3 or
 * 4, a power-of-two chunk of at least 512 bytes, a daemon_sleep, a
 * write-behind limit md allows.  0, or -1 with the reason (field and
 * value) in err. */
int md_bitmap_decode (const uint8_t *block, struct md_bitmap_header *h,
                      char *err, size_t errlen);

/* The header against the array: its sync_size must need as many bits
 * as the array's sync space (geometry_sync_bytes).  0, or -1 with the
 * reason in err. */
int md_bitmap_check (const struct md_bitmap_header *h, uint64_t sync_bytes,
                     char *err, size_t errlen);

/* Bits for a sync space, and the bytes the bitmap takes on disk (header
 * and bits, rounded up to 4 KiB). */
uint64_t md_bitmap_chunks (uint64_t sync_bytes, uint64_t chunk_bytes);
uint64_t md_bitmap_disk_bytes (uint64_t chunks);

#endif
