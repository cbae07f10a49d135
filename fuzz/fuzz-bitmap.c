/* nbdraid fuzz target: md's bitmap header decoder and the checks of it
 * against the array.
 *
 * Input: 8 bytes of the array's sync space in bytes (0: the header's
 * own sync_size), then the 256-byte header (zero-extended).
 * An accepted header must re-encode to one that decodes the same, and
 * its bitmap must cover the sync space in a whole number of 4 KiB
 * blocks.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitmap-format.h"
#include "le.h"
#include "check.h"
#include "raid.h"


int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  uint8_t block[4096], again[4096];
  struct md_bitmap_header h, h2;
  uint64_t sync_bytes, chunks, disk;
  char err[256];

  if (size < 8)
    return 0;
  sync_bytes = le64_get (data);
  data += 8;
  size -= 8;
  memset (block, 0, sizeof block);
  memcpy (block, data, size < MD_BITMAP_HEADER_BYTES ? size
          : MD_BITMAP_HEADER_BYTES);
  memset (&h, 0, sizeof h);
  if (md_bitmap_decode (block, &h, err, sizeof err) == -1) {
    CHECK (err[0] != '\0');
    return 0;
  }
  CHECK (h.chunk_bytes >= 512 && (h.chunk_bytes & (h.chunk_bytes - 1)) == 0);
  CHECK (h.daemon_sleep_s > 0 && h.write_behind <= RAID_WRITE_BEHIND_MAX);

  memset (&h2, 0, sizeof h2);
  md_bitmap_encode (&h, again);
  CHECK (md_bitmap_decode (again, &h2, err, sizeof err) == 0);
  CHECK (memcmp (&h, &h2, sizeof h) == 0);

  if (sync_bytes == 0)
    sync_bytes = h.sync_size_sectors <= UINT64_MAX / 512
      ? h.sync_size_sectors * 512 : UINT64_MAX;
  if (md_bitmap_check (&h, sync_bytes, err, sizeof err) == -1) {
    CHECK (err[0] != '\0');
    return 0;
  }
  chunks = md_bitmap_chunks (sync_bytes, h.chunk_bytes);
  /* The bits cover the sync space, with less than a chunk to spare. */
  CHECK (chunks >= sync_bytes / h.chunk_bytes);
  CHECK (chunks - sync_bytes / h.chunk_bytes <= 1);
  disk = md_bitmap_disk_bytes (chunks);
  CHECK (disk % 4096 == 0);
  CHECK (disk >= MD_BITMAP_HEADER_BYTES + chunks / 8);
  return 0;
}
