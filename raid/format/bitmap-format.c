/* nbdraid: encoding and checking md's bitmap header. */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bitmap-format.h"
#include "le.h"
#include "raid.h"

/* Offsets of md's bitmap_super_s (drivers/md/md-bitmap.h). */
enum {
  BM_MAGIC = 0, BM_VERSION = 4, BM_UUID = 8, BM_EVENTS = 24,
  BM_EVENTS_CLEARED = 32, BM_SYNC_SIZE = 40, BM_STATE = 48, BM_CHUNK = 52,
  BM_DAEMON_SLEEP = 56, BM_WRITE_BEHIND = 60, BM_SECTORS_RESERVED = 64,
};

/* Encode h into block as md's 256-byte bitmap header, version 4. */
void
md_bitmap_encode (const struct md_bitmap_header *h, uint8_t *b)
{
  memset (b, 0, MD_BITMAP_HEADER_BYTES);
  le32_put (b + BM_MAGIC, MD_BITMAP_MAGIC);
  le32_put (b + BM_VERSION, MD_BITMAP_VERSION);
  memcpy (b + BM_UUID, h->uuid, 16);
  le64_put (b + BM_EVENTS, h->events);
  le64_put (b + BM_EVENTS_CLEARED, h->events_cleared);
  le64_put (b + BM_SYNC_SIZE, h->sync_size_sectors);
  le32_put (b + BM_STATE, h->state);
  le32_put (b + BM_CHUNK, h->chunk_bytes);
  le32_put (b + BM_DAEMON_SLEEP, h->daemon_sleep_s);
  le32_put (b + BM_WRITE_BEHIND, h->write_behind);
  le32_put (b + BM_SECTORS_RESERVED, h->sectors_reserved);
}

int
md_bitmap_decode (const uint8_t *b, struct md_bitmap_header *h, char *err,
                  size_t errlen)
{
  uint32_t magic = le32_get (b + BM_MAGIC), version = le32_get (b + BM_VERSION);

  if (magic != MD_BITMAP_MAGIC) {
    snprintf (err, errlen, "bitmap magic 0x%08x is wrong", magic);
    return -1;
  }
  if (version < 3 || version > MD_BITMAP_VERSION) {
    snprintf (err, errlen, "bitmap version %u is not supported", version);
    return -1;
  }
  memcpy (h->uuid, b + BM_UUID, 16);
  h->events = le64_get (b + BM_EVENTS);
  h->events_cleared = le64_get (b + BM_EVENTS_CLEARED);
  h->sync_size_sectors = le64_get (b + BM_SYNC_SIZE);
  h->state = le32_get (b + BM_STATE);
  h->chunk_bytes = le32_get (b + BM_CHUNK);
  h->daemon_sleep_s = le32_get (b + BM_DAEMON_SLEEP);
  h->write_behind = le32_get (b + BM_WRITE_BEHIND);
  h->sectors_reserved = le32_get (b + BM_SECTORS_RESERVED);
  if (h->chunk_bytes < 512 || (h->chunk_bytes & (h->chunk_bytes - 1))) {
    snprintf (err, errlen, "bitmap chunksize %u is not a power of two of "
              "at least 512", h->chunk_bytes);
    return -1;
  }
  /* md-bitmap.c md_bitmap_read_sb(): "daemon sleep period out of
   * range". */
  if (h->daemon_sleep_s == 0) {
    snprintf (err, errlen, "bitmap daemon_sleep 0 is out of range");
    return -1;
  }
  /* md_bitmap_read_sb(): "write-behind limit out of range". */
  if (h->write_behind > RAID_WRITE_BEHIND_MAX) {
    snprintf (err, errlen, "bitmap write_behind %u is out of range (0 to "
              "%u)", h->write_behind, RAID_WRITE_BEHIND_MAX);
    return -1;
  }
  return 0;
}

int
md_bitmap_check (const struct md_bitmap_header *h, uint64_t sync_bytes,
                 char *err, size_t errlen)
{
  if (h->sync_size_sectors > UINT64_MAX / 512 ||
      md_bitmap_chunks (h->sync_size_sectors * 512, h->chunk_bytes) !=
      md_bitmap_chunks (sync_bytes, h->chunk_bytes)) {
    snprintf (err, errlen, "bitmap sync_size %" PRIu64 " sectors does not "
              "match the array's %" PRIu64, h->sync_size_sectors,
              sync_bytes / 512);
    return -1;
  }
  return 0;
}

/* Rounded up without overflowing near UINT64_MAX. */
uint64_t
md_bitmap_chunks (uint64_t sync_bytes, uint64_t chunk_bytes)
{
  return sync_bytes / chunk_bytes + (sync_bytes % chunk_bytes != 0);
}

uint64_t
md_bitmap_disk_bytes (uint64_t chunks)
{
  return (MD_BITMAP_HEADER_BYTES + (chunks + 7) / 8 + 4095) / 4096 * 4096;
}
