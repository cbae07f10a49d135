/* nbdraid: test md's partial parity log header (ppl-format.h): md's
 * checksum form (CRC32C computed here bit by bit, independently of
 * ISA-L's), the fields where md_p.h puts them, round trips, and headers
 * that are torn, foreign or overfull refused. */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "ppl-format.h"
#include "test-report.h"

/* md's ~crc32c(~0, ...): the reflected Castagnoli CRC, inverted going
 * in and coming out. */
static uint32_t
reference_crc (const uint8_t *p, size_t n)
{
  uint32_t crc = ~0U;
  size_t i;
  int k;

  for (i = 0; i < n; i++) {
    crc ^= p[i];
    for (k = 0; k < 8; k++)
      crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78 : crc >> 1;
  }
  return ~crc;
}

static void
check_crc (void)
{
  static const uint8_t uuid[16]
      = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
  uint8_t big[10000];
  size_t i;

  /* The CRC-32C check value. */
  if (ppl_crc ("123456789", 9) != 0xe3069283)
    fail ("ppl_crc(\"123456789\") = 0x%08x, not 0xe3069283",
          ppl_crc ("123456789", 9));
  if (ppl_signature (uuid) != reference_crc (uuid, 16))
    fail ("signature 0x%08x, reference 0x%08x", ppl_signature (uuid),
          reference_crc (uuid, 16));
  for (i = 0; i < sizeof big; i++)
    big[i] = (uint8_t)(i * 7 + i / 13);
  /* In pieces, as an entry's partial parity is summed block by block. */
  if (ppl_crc_more (ppl_crc (big, 4096), big + 4096, sizeof big - 4096)
      != reference_crc (big, sizeof big))
    fail ("ppl_crc_more does not continue ppl_crc");
}

static void
sample (struct ppl_header *h)
{
  unsigned i;

  memset (h, 0, sizeof *h);
  h->signature = 0xdeadbeef;
  h->generation = 0x0102030405060708ULL;
  h->entries_count = PPL_HDR_MAX_ENTRIES;
  for (i = 0; i < h->entries_count; i++) {
    h->entries[i].data_sector = 1000 + 8ULL * i;
    h->entries[i].pp_size = 4096 * (i % 3);
    h->entries[i].data_size = 8192 * (i + 1);
    h->entries[i].parity_disk = i % 5;
    h->entries[i].checksum = 0x11111111U * (i % 15);
  }
}

static void
check_layout (void)
{
  static uint8_t b[PPL_HEADER_BYTES], copy[PPL_HEADER_BYTES];
  struct ppl_header h, d;
  char err[200];
  unsigned i;

  sample (&h);
  ppl_header_encode (&h, b);
  for (i = 0; i < PPL_HDR_RESERVED; i++)
    if (b[i] != 0xff) {
      fail ("reserved byte %u is 0x%02x, not 0xff", i, b[i]);
      break;
    }
  if (le32_get (b + 512) != 0xdeadbeef || le32_get (b + 516) != 0
      || le64_get (b + 520) != h.generation
      || le32_get (b + 528) != PPL_HDR_MAX_ENTRIES)
    fail ("signature, padding, generation or count not where md_p.h has "
          "them");
  /* entries[1] at 536 + 24 */
  if (le64_get (b + 560) != h.entries[1].data_sector
      || le32_get (b + 568) != h.entries[1].pp_size
      || le32_get (b + 572) != h.entries[1].data_size
      || le32_get (b + 576) != h.entries[1].parity_disk
      || le32_get (b + 580) != h.entries[1].checksum)
    fail ("entry 1 not where md_p.h has it");
  /* md sums the block with the checksum field zero. */
  memcpy (copy, b, sizeof copy);
  le32_put (copy + 532, 0);
  if (le32_get (b + 532) != reference_crc (copy, sizeof copy))
    fail ("header checksum 0x%08x, reference 0x%08x", le32_get (b + 532),
          reference_crc (copy, sizeof copy));
  if (ppl_header_decode (b, 0xdeadbeef, &d, err, sizeof err) == -1)
    fail ("a header just encoded is refused: %s", err);
  else if (memcmp (&d, &h, sizeof d) != 0)
    fail ("the header does not round-trip");
  /* entries 0..147: 49 with one block, 49 with two */
  if (ppl_header_pp_bytes (&h) != 4096ULL * (49 + 2 * 49))
    fail ("pp bytes %llu", (unsigned long long)ppl_header_pp_bytes (&h));
}

static void
check_refused (void)
{
  static uint8_t b[PPL_HEADER_BYTES];
  struct ppl_header h, d;
  char err[200];

  sample (&h);
  ppl_header_encode (&h, b);
  b[2000] ^= 1;
  if (ppl_header_decode (b, 0xdeadbeef, &d, err, sizeof err) == 0
      || !strstr (err, "checksum"))
    fail ("a torn header is not refused for its checksum: %s", err);
  b[2000] ^= 1;
  if (ppl_header_decode (b, 0xdeadbeee, &d, err, sizeof err) == 0
      || !strstr (err, "signature"))
    fail ("another array's header is not refused: %s", err);
  /* One entry too many, with a checksum that matches. */
  le32_put (b + 528, PPL_HDR_MAX_ENTRIES + 1);
  le32_put (b + 532, 0);
  le32_put (b + 532, ppl_crc (b, sizeof b));
  if (ppl_header_decode (b, 0xdeadbeef, &d, err, sizeof err) == 0
      || !strstr (err, "entries_count"))
    fail ("an overfull header is not refused: %s", err);
  memset (b, 0, sizeof b);
  if (ppl_header_decode (b, 0, &d, err, sizeof err) == 0)
    fail ("a zeroed block passes for a header");
}

int
main (void)
{
  check_crc ();
  check_layout ();
  check_refused ();
  if (failures) {
    printf ("%u failures\n", failures);
    return 1;
  }
  printf ("ppl-format: md's header layout, checksums and refusals\n");
  return 0;
}
