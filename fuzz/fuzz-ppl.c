/* nbdraid fuzz target: md's partial parity log header decoder.
 *
 * Input: a flag byte (bit 0: keep the header checksum as given;
 * otherwise it is fixed so the fuzzer gets past it), then the 4 KiB
 * header block (zero-extended).  Whatever ppl_header_decode accepts
 * holds at most md's entry count, and re-encodes to a block that
 * decodes to the same header.
 */
#include <config.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "le.h"
#include "ppl-format.h"

#define CHECKSUM_AT (PPL_HDR_RESERVED + 20)

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static uint8_t block[PPL_HEADER_BYTES], again[PPL_HEADER_BYTES];
  static struct ppl_header h, h2;
  uint32_t signature;
  char err[256];

  if (size < 1)
    return 0;
  memset (block, 0, sizeof block);
  memcpy (block, data + 1, size - 1 < sizeof block ? size - 1 : sizeof block);
  signature = le32_get (block + PPL_HDR_RESERVED);
  if (!(data[0] & 1)) {
    le32_put (block + CHECKSUM_AT, 0);
    le32_put (block + CHECKSUM_AT, ppl_crc (block, sizeof block));
  }
  if (ppl_header_decode (block, signature, &h, err, sizeof err) == -1)
    return 0;
  CHECK (h.entries_count <= PPL_HDR_MAX_ENTRIES);
  CHECK (h.signature == signature);
  ppl_header_encode (&h, again);
  CHECK (ppl_header_decode (again, signature, &h2, err, sizeof err) == 0);
  CHECK (memcmp (&h, &h2, sizeof h) == 0);
  CHECK (ppl_header_pp_bytes (&h) == ppl_header_pp_bytes (&h2));
  return 0;
}
