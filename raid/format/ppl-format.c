/* nbdraid: md's partial parity log header (md_p.h: struct ppl_header). */
#include <config.h>

#include <isa-l/crc.h>
#include <stdio.h>
#include <string.h>

#include "le.h"
#include "ppl-format.h"

/* Field offsets in the header block. */
enum {
  PH_SIGNATURE = PPL_HDR_RESERVED,
  PH_PADDING = PH_SIGNATURE + 4,
  PH_GENERATION = PH_PADDING + 4,
  PH_ENTRIES_COUNT = PH_GENERATION + 8,
  PH_CHECKSUM = PH_ENTRIES_COUNT + 4,
  PH_ENTRIES = PH_CHECKSUM + 4,
  PE_BYTES = 24,
};

_Static_assert(PH_ENTRIES + PPL_HDR_MAX_ENTRIES * PE_BYTES <= PPL_HEADER_BYTES,
               "the entries fit the header");
_Static_assert(PH_ENTRIES + (PPL_HDR_MAX_ENTRIES + 1) * PE_BYTES
                   > PPL_HEADER_BYTES,
               "md's entry count");

/* ISA-L's crc32_iscsi is the bare CRC register, like the kernel's
 * crc32c_le: md's form inverts it going in and coming out. */
uint32_t
ppl_crc_more (uint32_t crc, const void *buf, size_t len)
{
  return ~crc32_iscsi ((uint8_t *)buf, (int)len, ~crc);
}

uint32_t
ppl_crc (const void *buf, size_t len)
{
  return ppl_crc_more (0, buf, len);
}

uint32_t
ppl_signature (const uint8_t set_uuid[16])
{
  return ppl_crc (set_uuid, 16);
}

void
ppl_header_encode (const struct ppl_header *h, uint8_t *b)
{
  uint32_t i;

  memset (b, 0, PPL_HEADER_BYTES);
  memset (b, 0xff, PPL_HDR_RESERVED);
  le32_put (b + PH_SIGNATURE, h->signature);
  le64_put (b + PH_GENERATION, h->generation);
  le32_put (b + PH_ENTRIES_COUNT, h->entries_count);
  for (i = 0; i < h->entries_count && i < PPL_HDR_MAX_ENTRIES; i++) {
    uint8_t *e = b + PH_ENTRIES + i * PE_BYTES;

    le64_put (e, h->entries[i].data_sector);
    le32_put (e + 8, h->entries[i].pp_size);
    le32_put (e + 12, h->entries[i].data_size);
    le32_put (e + 16, h->entries[i].parity_disk);
    le32_put (e + 20, h->entries[i].checksum);
  }
  le32_put (b + PH_CHECKSUM, ppl_crc (b, PPL_HEADER_BYTES));
}

int
ppl_header_decode (const uint8_t *b, uint32_t signature, struct ppl_header *h,
                   char *err, size_t errlen)
{
  uint8_t copy[PPL_HEADER_BYTES];
  uint32_t stored = le32_get (b + PH_CHECKSUM), i;

  /* md sums the block with the checksum field taken as zero. */
  memcpy (copy, b, sizeof copy);
  le32_put (copy + PH_CHECKSUM, 0);
  if (ppl_crc (copy, sizeof copy) != stored) {
    snprintf (err, errlen, "header checksum 0x%08x, expected 0x%08x", stored,
              ppl_crc (copy, sizeof copy));
    return -1;
  }
  memset (h, 0, sizeof *h);
  h->signature = le32_get (b + PH_SIGNATURE);
  h->generation = le64_get (b + PH_GENERATION);
  h->entries_count = le32_get (b + PH_ENTRIES_COUNT);
  if (h->signature != signature) {
    snprintf (err, errlen, "signature 0x%08x is another array's (0x%08x)",
              h->signature, signature);
    return -1;
  }
  if (h->entries_count > PPL_HDR_MAX_ENTRIES) {
    snprintf (err, errlen, "entries_count %u is above %u", h->entries_count,
              PPL_HDR_MAX_ENTRIES);
    return -1;
  }
  for (i = 0; i < h->entries_count; i++) {
    const uint8_t *e = b + PH_ENTRIES + i * PE_BYTES;

    h->entries[i].data_sector = le64_get (e);
    h->entries[i].pp_size = le32_get (e + 8);
    h->entries[i].data_size = le32_get (e + 12);
    h->entries[i].parity_disk = le32_get (e + 16);
    h->entries[i].checksum = le32_get (e + 20);
  }
  return 0;
}

uint64_t
ppl_header_pp_bytes (const struct ppl_header *h)
{
  uint64_t n = 0;
  uint32_t i;

  for (i = 0; i < h->entries_count; i++)
    n += h->entries[i].pp_size;
  return n;
}
