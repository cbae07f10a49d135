/* nbdraid: md's partial parity log (PPL) on-disk format.
 *
 * md's raid5-ppl.c closes the RAID5 write hole this way: before a
 * stripe's data and parity are written, the XOR of the data chunks the
 * write leaves alone (the partial parity) is logged on the stripe's
 * parity member, in a 1 MiB area between the superblock and the data.
 * After a crash, parity = partial parity ^ the written chunks as they
 * are on disk, which agrees with the data whichever writes landed.
 *
 * The area holds a chain of logs, each a 4 KiB header with its entries
 * followed by the partial parity of its entries in order; only the
 * latest log (highest generation) is replayed, so a new one may only be
 * written once the stripes of the previous one are on the members.
 */
#ifndef NBDRAID_PPL_FORMAT_H
#define NBDRAID_PPL_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define PPL_HEADER_BYTES 4096
#define PPL_HDR_RESERVED 512
#define PPL_HDR_MAX_ENTRIES 148
/* mdadm's placement for v1.2: 8 sectors after the superblock's start,
 * 1 MiB long (MULTIPLE_PPL_AREA_SIZE_SUPER1). */
#define PPL_OFFSET_SECTORS 8
#define PPL_AREA_SECTORS 2048

struct ppl_entry {
  uint64_t data_sector; /* array sector of the first written data */
  uint32_t pp_size;     /* bytes of partial parity; 0: full rows */
  uint32_t data_size;   /* bytes of data written */
  uint32_t parity_disk; /* role holding the rows' parity */
  uint32_t checksum;    /* md's ~crc32c of the partial parity */
};

struct ppl_header {
  uint32_t signature; /* ppl_signature of the array's UUID */
  uint64_t generation;
  uint32_t entries_count;
  struct ppl_entry entries[PPL_HDR_MAX_ENTRIES];
};

/* md's checksum, ~crc32c(~0, ...), over len bytes; ppl_crc_more goes on
 * from a previous ppl_crc's result. */
uint32_t ppl_crc (const void *buf, size_t len);
uint32_t ppl_crc_more (uint32_t crc, const void *buf, size_t len);

/* The signature md writes in every header: ppl_crc of the set UUID. */
uint32_t ppl_signature (const uint8_t set_uuid[16]);

/* Encode into a PPL_HEADER_BYTES buffer (reserved bytes 0xff, as md). */
void ppl_header_encode (const struct ppl_header *h, uint8_t *block);

/* Decode a header block: 0, or -1 with the reason in err (checksum,
 * signature, entry count). */
int ppl_header_decode (const uint8_t *block, uint32_t signature,
                       struct ppl_header *h, char *err, size_t errlen);

/* Bytes of partial parity the header's entries carry after it. */
uint64_t ppl_header_pp_bytes (const struct ppl_header *h);

#endif
