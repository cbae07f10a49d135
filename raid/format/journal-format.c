/* nbdraid: md's write journal meta block (md_p.h: r5l_meta_block and
 * its payloads). */
#include <config.h>

#include <isa-l/crc.h>
#include <stdio.h>
#include <string.h>

#include "journal-format.h"
#include "le.h"

/* Field offsets in the meta block and in a payload. */
enum {
  MB_MAGIC = 0,
  MB_CHECKSUM = 4,
  MB_VERSION = 8,
  MB_META_SIZE = 12,
  MB_SEQ = 16,
  MB_POSITION = 24,
  PL_TYPE = 0,
  PL_FLAGS = 2,
  PL_SIZE = 4,
  PL_LOCATION = 8,
  PL_CHECKSUMS = 16,
  PF_STRIPES = 8,
};

_Static_assert(MB_POSITION + 8 == R5L_META_HEADER_BYTES,
               "the meta block header is md's 32 bytes");
_Static_assert(R5L_MAX_MEMBERS == 203,
               "md: a journal serves at most 203 members");

/* The kernel's crc32c_le(seed, ...) is the bare CRC register, as ISA-L's
 * crc32_iscsi is: no inversion going in or out (unlike the PPL's). */
static uint32_t
r5l_crc (uint32_t seed, const void *buf, size_t len)
{
  return crc32_iscsi ((uint8_t *)buf, (int)len, seed);
}

uint32_t
r5l_uuid_checksum (const uint8_t set_uuid[16])
{
  return r5l_crc (~0U, set_uuid, 16);
}

uint32_t
r5l_page_checksum (uint32_t uuid_checksum, const uint8_t *page)
{
  return r5l_crc (uuid_checksum, page, R5L_BLOCK_BYTES);
}

void
r5l_meta_init (struct r5l_meta *m, uint64_t seq, uint64_t position)
{
  memset (m, 0, sizeof *m);
  m->seq = seq;
  m->position = position;
  m->meta_size = R5L_META_HEADER_BYTES;
}

uint32_t
r5l_payload_bytes (uint32_t pages)
{
  return R5L_DATA_PARITY_BYTES + 4 * pages;
}

static int
add_pages (struct r5l_meta *m, uint16_t type, uint64_t location, uint32_t pages,
           const uint32_t *checksums)
{
  struct r5l_payload *p;
  uint32_t i;

  if (pages < 1 || pages > R5L_MAX_PAYLOAD_PAGES
      || m->npayloads >= R5L_MAX_PAYLOADS
      || m->meta_size + r5l_payload_bytes (pages) > R5L_BLOCK_BYTES)
    return -1;
  p = &m->payload[m->npayloads++];
  memset (p, 0, sizeof *p);
  p->type = type;
  p->pages = pages;
  p->location = location;
  for (i = 0; i < pages; i++)
    p->checksum[i] = checksums[i];
  m->meta_size += r5l_payload_bytes (pages);
  return 0;
}

int
r5l_meta_add_data (struct r5l_meta *m, uint64_t location, uint32_t checksum)
{
  return add_pages (m, R5L_PAYLOAD_DATA, location, 1, &checksum);
}

int
r5l_meta_add_parity (struct r5l_meta *m, uint64_t location, uint32_t pages,
                     const uint32_t *checksums)
{
  return add_pages (m, R5L_PAYLOAD_PARITY, location, pages, checksums);
}

int
r5l_meta_add_flush (struct r5l_meta *m, uint64_t stripe_sector)
{
  struct r5l_payload *p;

  if (m->meta_size + R5L_FLUSH_BYTES + 8 > R5L_BLOCK_BYTES
      || m->npayloads >= R5L_MAX_PAYLOADS)
    return -1;
  p = &m->payload[m->npayloads++];
  memset (p, 0, sizeof *p);
  p->type = R5L_PAYLOAD_FLUSH;
  p->first_flush = m->nflush;
  p->nflush = 1;
  m->flush[m->nflush++] = stripe_sector;
  m->meta_size += R5L_FLUSH_BYTES + 8;
  return 0;
}

uint64_t
r5l_meta_pages (const struct r5l_meta *m)
{
  uint64_t n = 0;
  uint32_t i;

  for (i = 0; i < m->npayloads; i++)
    if (m->payload[i].type != R5L_PAYLOAD_FLUSH)
      n += m->payload[i].pages;
  return n;
}

void
r5l_meta_encode (const struct r5l_meta *m, uint32_t uuid_checksum, uint8_t *b)
{
  uint32_t off = R5L_META_HEADER_BYTES, i, j;

  memset (b, 0, R5L_BLOCK_BYTES);
  le32_put (b + MB_MAGIC, R5L_MAGIC);
  b[MB_VERSION] = R5L_VERSION;
  le32_put (b + MB_META_SIZE, m->meta_size);
  le64_put (b + MB_SEQ, m->seq);
  le64_put (b + MB_POSITION, m->position);
  for (i = 0; i < m->npayloads; i++) {
    const struct r5l_payload *p = &m->payload[i];
    uint8_t *q = b + off;

    le16_put (q + PL_TYPE, p->type);
    le16_put (q + PL_FLAGS, p->flags);
    if (p->type == R5L_PAYLOAD_FLUSH) {
      le32_put (q + PL_SIZE, p->nflush * 8);
      for (j = 0; j < p->nflush; j++)
        le64_put (q + PF_STRIPES + 8 * j, m->flush[p->first_flush + j]);
      off += R5L_FLUSH_BYTES + 8 * p->nflush;
      continue;
    }
    le32_put (q + PL_SIZE, p->pages * R5L_BLOCK_SECTORS);
    le64_put (q + PL_LOCATION, p->location);
    for (j = 0; j < p->pages; j++)
      le32_put (q + PL_CHECKSUMS + 4 * j, p->checksum[j]);
    off += r5l_payload_bytes (p->pages);
  }
  /* md sums the whole block with the checksum field zero. */
  le32_put (b + MB_CHECKSUM, r5l_crc (uuid_checksum, b, R5L_BLOCK_BYTES));
}

/* Decode the payload at byte off of block b into m; the new offset, or
 * 0 with the reason in err. */
static uint32_t
decode_payload (const uint8_t *b, uint32_t off, struct r5l_meta *m, char *err,
                size_t errlen)
{
  const uint8_t *q = b + off;
  struct r5l_payload *p = &m->payload[m->npayloads];
  uint32_t size, j, n = m->npayloads;

  if (off + 8 > m->meta_size || n >= R5L_MAX_PAYLOADS) {
    snprintf (err, errlen, "payload %u at byte %u runs past meta_size %u", n,
              off, m->meta_size);
    return 0;
  }
  memset (p, 0, sizeof *p);
  p->type = le16_get (q + PL_TYPE);
  p->flags = le16_get (q + PL_FLAGS);
  size = le32_get (q + PL_SIZE);
  if (p->type == R5L_PAYLOAD_FLUSH) {
    /* off + 8 <= meta_size, so this cannot wrap as off + 8 + size can. */
    if (size == 0 || size % 8 != 0
        || size > m->meta_size - off - R5L_FLUSH_BYTES) {
      snprintf (err, errlen,
                "flush payload %u: %u bytes of stripes do not fit "
                "meta_size %u",
                n, size, m->meta_size);
      return 0;
    }
    p->first_flush = m->nflush;
    p->nflush = size / 8;
    for (j = 0; j < p->nflush; j++)
      m->flush[m->nflush++] = le64_get (q + PF_STRIPES + 8 * j);
    m->npayloads++;
    return off + R5L_FLUSH_BYTES + size;
  }
  if (p->type != R5L_PAYLOAD_DATA && p->type != R5L_PAYLOAD_PARITY) {
    snprintf (err, errlen, "payload %u has unknown type %u", n, p->type);
    return 0;
  }
  p->pages = size / R5L_BLOCK_SECTORS;
  /* md writes a data payload per page, a parity payload of P (and Q). */
  if (size % R5L_BLOCK_SECTORS != 0 || p->pages < 1
      || p->pages > (p->type == R5L_PAYLOAD_DATA ? 1 : R5L_MAX_PAYLOAD_PAGES)) {
    snprintf (err, errlen, "%s payload %u: size %u sectors",
              p->type == R5L_PAYLOAD_DATA ? "data" : "parity", n, size);
    return 0;
  }
  if (off + r5l_payload_bytes (p->pages) > m->meta_size) {
    snprintf (err, errlen, "payload %u at byte %u runs past meta_size %u", n,
              off, m->meta_size);
    return 0;
  }
  p->location = le64_get (q + PL_LOCATION);
  for (j = 0; j < p->pages; j++)
    p->checksum[j] = le32_get (q + PL_CHECKSUMS + 4 * j);
  m->npayloads++;
  return off + r5l_payload_bytes (p->pages);
}

int
r5l_meta_decode (const uint8_t *b, uint32_t uuid_checksum, struct r5l_meta *m,
                 char *err, size_t errlen)
{
  uint8_t copy[R5L_BLOCK_BYTES];
  uint32_t stored = le32_get (b + MB_CHECKSUM), off, want;

  memset (m, 0, sizeof *m);
  if (le32_get (b + MB_MAGIC) != R5L_MAGIC) {
    snprintf (err, errlen, "magic 0x%08x, not md's 0x%08x",
              le32_get (b + MB_MAGIC), R5L_MAGIC);
    return -1;
  }
  if (b[MB_VERSION] != R5L_VERSION) {
    snprintf (err, errlen, "version %u, not %u", b[MB_VERSION], R5L_VERSION);
    return -1;
  }
  memcpy (copy, b, sizeof copy);
  le32_put (copy + MB_CHECKSUM, 0);
  want = r5l_crc (uuid_checksum, copy, sizeof copy);
  if (stored != want) {
    snprintf (err, errlen, "checksum 0x%08x, expected 0x%08x", stored, want);
    return -1;
  }
  m->seq = le64_get (b + MB_SEQ);
  m->position = le64_get (b + MB_POSITION);
  m->meta_size = le32_get (b + MB_META_SIZE);
  if (m->meta_size < R5L_META_HEADER_BYTES || m->meta_size > R5L_BLOCK_BYTES) {
    snprintf (err, errlen, "meta_size %u is outside %u..%u", m->meta_size,
              R5L_META_HEADER_BYTES, R5L_BLOCK_BYTES);
    return -1;
  }
  for (off = R5L_META_HEADER_BYTES; off < m->meta_size;)
    if ((off = decode_payload (b, off, m, err, errlen)) == 0)
      return -1;
  return 0;
}
