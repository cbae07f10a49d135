/* nbdraid: md's RAID4/5/6 write journal on-disk format (md_p.h's
 * r5l_meta_block; drivers/md/raid5-cache.c).
 *
 * The journal device's data area is a ring of 4 KiB blocks.  Each
 * write to the array's members is first appended to the ring as a
 * meta block followed by the pages its payloads describe: data pages
 * (each at an array sector) and the parity pages of their stripe (P,
 * then Q for RAID6, at the stripe's member sector).  The journal
 * device's superblock records the tail (journal_tail, in the field
 * v1.2 calls recovery_offset); at assembly md replays the meta blocks
 * from the tail while each is sound and carries the next sequence
 * number, and writes their pages to the members.
 */
#ifndef NBDRAID_JOURNAL_FORMAT_H
#define NBDRAID_JOURNAL_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* md: BLOCK_SECTORS; meta blocks and payload pages are 4 KiB. */
#define R5L_BLOCK_BYTES 4096
#define R5L_BLOCK_SECTORS 8
#define R5L_MAGIC 0x6433c509
#define R5L_VERSION 1
/* sizeof (struct r5l_meta_block): magic, checksum, version, padding,
 * meta_size, seq, position. */
#define R5L_META_HEADER_BYTES 32
/* sizeof (struct r5l_payload_data_parity) and r5l_payload_flush,
 * without their trailing checksums / stripes. */
#define R5L_DATA_PARITY_BYTES 16
#define R5L_FLUSH_BYTES 8
/* The most payloads a block holds: flush payloads of one stripe each. */
#define R5L_MAX_PAYLOADS                                                       \
  ((R5L_BLOCK_BYTES - R5L_META_HEADER_BYTES) / (R5L_FLUSH_BYTES + 8))
/* md's r5l_init_log(): a block must hold a data payload per member. */
#define R5L_MAX_MEMBERS                                                        \
  ((R5L_BLOCK_BYTES - R5L_META_HEADER_BYTES) / (R5L_DATA_PARITY_BYTES + 4))
#define R5L_MAX_FLUSH_STRIPES                                                  \
  ((R5L_BLOCK_BYTES - R5L_META_HEADER_BYTES - R5L_FLUSH_BYTES) / 8)
/* md writes a parity payload of P and Q: at most two pages a payload. */
#define R5L_MAX_PAYLOAD_PAGES 2
/* md's r5l_recovery_log(): the sequence number jumps this far past a
 * replayed log, so a stale block after it is never taken for the next. */
#define R5L_SEQ_SKIP 10000

enum r5l_payload_type {
  R5L_PAYLOAD_DATA = 0,
  R5L_PAYLOAD_PARITY = 1,
  R5L_PAYLOAD_FLUSH = 2,
};

struct r5l_payload {
  uint16_t type;
  uint16_t flags;
  /* Data and parity: pages that follow (size / 8 sectors in md),
   * location (data: array sector; parity: the stripe's member sector,
   * from the data offset), and each page's checksum.  Flush: the
   * stripes in flush[first_flush .. first_flush + nflush - 1]. */
  uint32_t pages;
  uint64_t location;
  uint32_t checksum[R5L_MAX_PAYLOAD_PAGES];
  uint32_t first_flush, nflush;
};

struct r5l_meta {
  uint64_t seq;
  uint64_t position;  /* sectors from the journal's data offset */
  uint32_t meta_size; /* bytes of the block in use */
  uint32_t npayloads;
  struct r5l_payload payload[R5L_MAX_PAYLOADS];
  uint32_t nflush;
  uint64_t flush[R5L_MAX_FLUSH_STRIPES];
};

/* md's log->uuid_checksum: crc32c_le(~0, set_uuid), which seeds every
 * other checksum of the journal. */
uint32_t r5l_uuid_checksum (const uint8_t set_uuid[16]);

/* md's payload checksum: crc32c_le(uuid_checksum, page, 4096). */
uint32_t r5l_page_checksum (uint32_t uuid_checksum, const uint8_t *page);

/* An empty meta block at `position` with sequence `seq`. */
void r5l_meta_init (struct r5l_meta *m, uint64_t seq, uint64_t position);

/* Append a payload if the block has room: a data page at array sector
 * `location`; a parity payload of `pages` (1: P; 2: P and Q) at member
 * sector `location`; a flush payload naming one stripe.  0, or -1 when
 * the block is full. */
int r5l_meta_add_data (struct r5l_meta *m, uint64_t location,
                       uint32_t checksum);
int r5l_meta_add_parity (struct r5l_meta *m, uint64_t location, uint32_t pages,
                         const uint32_t *checksums);
int r5l_meta_add_flush (struct r5l_meta *m, uint64_t stripe_sector);

/* Bytes a payload of `pages` pages takes in the block. */
uint32_t r5l_payload_bytes (uint32_t pages);

/* Pages the block's payloads are followed by. */
uint64_t r5l_meta_pages (const struct r5l_meta *m);

/* Encode into an R5L_BLOCK_BYTES buffer, checksummed. */
void r5l_meta_encode (const struct r5l_meta *m, uint32_t uuid_checksum,
                      uint8_t *block);

/* Decode a meta block: 0, or -1 with the reason in err (magic,
 * version, checksum, meta_size, a payload that runs past meta_size or
 * has an unknown type or size).  Its sequence and position are the
 * caller's to check. */
int r5l_meta_decode (const uint8_t *block, uint32_t uuid_checksum,
                     struct r5l_meta *m, char *err, size_t errlen);

#endif
