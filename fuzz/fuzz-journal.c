/* nbdraid fuzz target: md's write journal meta block decoder.
 *
 * Input: a flag byte (bit 0: keep the block's checksum as given;
 * otherwise it is fixed so the fuzzer gets past it), then the 4 KiB
 * meta block (zero-extended).  Whatever r5l_meta_decode accepts has its
 * payloads inside meta_size, and re-encodes to the same block's
 * meaning: it decodes again to the same meta block.
 */
#include <config.h>

#include <isa-l/crc.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "journal-format.h"
#include "le.h"

#define SEED 0x5eedf00dU

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static uint8_t block[R5L_BLOCK_BYTES], again[R5L_BLOCK_BYTES];
  static struct r5l_meta m, m2;
  uint64_t bytes = 0;
  uint32_t i;
  char err[256];

  if (size < 1)
    return 0;
  memset (block, 0, sizeof block);
  memcpy (block, data + 1, size - 1 < sizeof block ? size - 1 : sizeof block);
  if (!(data[0] & 1)) {
    le32_put (block + 4, 0);
    le32_put (block + 4, crc32_iscsi (block, R5L_BLOCK_BYTES, SEED));
  }
  if (r5l_meta_decode (block, SEED, &m, err, sizeof err) == -1)
    return 0;
  CHECK (m.meta_size >= R5L_META_HEADER_BYTES);
  CHECK (m.meta_size <= R5L_BLOCK_BYTES);
  CHECK (m.npayloads <= R5L_MAX_PAYLOADS);
  for (i = 0, bytes = R5L_META_HEADER_BYTES; i < m.npayloads; i++) {
    const struct r5l_payload *p = &m.payload[i];

    if (p->type == R5L_PAYLOAD_FLUSH) {
      CHECK (p->nflush > 0);
      CHECK (p->first_flush + p->nflush <= m.nflush);
      bytes += R5L_FLUSH_BYTES + 8 * p->nflush;
    }
    else {
      CHECK (p->pages >= 1 && p->pages <= R5L_MAX_PAYLOAD_PAGES);
      bytes += r5l_payload_bytes (p->pages);
    }
  }
  CHECK (bytes == m.meta_size);
  r5l_meta_encode (&m, SEED, again);
  CHECK (r5l_meta_decode (again, SEED, &m2, err, sizeof err) == 0);
  CHECK (memcmp (&m, &m2, sizeof m) == 0);
  CHECK (r5l_meta_pages (&m) == r5l_meta_pages (&m2));
  return 0;
}
