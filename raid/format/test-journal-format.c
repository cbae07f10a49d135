/* nbdraid: test md's write journal meta block (journal-format.h): md's
 * checksum (CRC32C computed here bit by bit, independently of ISA-L's,
 * seeded with the UUID's), the fields where md_p.h puts them, round
 * trips, and blocks that are torn, foreign or malformed refused. */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal-format.h"
#include "le.h"
#include "test-report.h"

static const uint8_t uuid[16]
    = { 0xa1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0xf6 };

/* The kernel's crc32c_le(seed, ...): the reflected Castagnoli CRC
 * register, no inversion. */
static uint32_t
reference_crc (uint32_t crc, const uint8_t *p, size_t n)
{
  size_t i;
  int k;

  for (i = 0; i < n; i++) {
    crc ^= p[i];
    for (k = 0; k < 8; k++)
      crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78 : crc >> 1;
  }
  return crc;
}

static void
check_crc (void)
{
  uint32_t u = r5l_uuid_checksum (uuid);
  uint8_t page[R5L_BLOCK_BYTES];
  size_t i;

  /* The CRC-32C check value, with md's seed and no final inversion. */
  if (r5l_uuid_checksum ((const uint8_t *)"123456789\0\0\0\0\0\0")
      != reference_crc (~0U, (const uint8_t *)"123456789\0\0\0\0\0\0", 16))
    fail ("uuid checksum differs from the reference");
  if (~reference_crc (~0U, (const uint8_t *)"123456789", 9) != 0xe3069283)
    fail ("the reference CRC is not CRC-32C");
  if (u != reference_crc (~0U, uuid, 16))
    fail ("uuid checksum 0x%08x, reference 0x%08x", u,
          reference_crc (~0U, uuid, 16));
  for (i = 0; i < sizeof page; i++)
    page[i] = (uint8_t)(i * 13 + i / 7);
  if (r5l_page_checksum (u, page) != reference_crc (u, page, sizeof page))
    fail ("page checksum differs from the reference");
}

/* A block with every kind of payload: two data pages, RAID6 parity, a
 * flush. */
static void
sample (struct r5l_meta *m)
{
  uint32_t pq[2] = { 0x22222222, 0x33333333 };

  r5l_meta_init (m, 0x0102030405060708ULL, 4096);
  if (r5l_meta_add_data (m, 123456, 0x11111111) == -1
      || r5l_meta_add_data (m, 123464, 0x44444444) == -1
      || r5l_meta_add_parity (m, 2048, 2, pq) == -1
      || r5l_meta_add_flush (m, 777) == -1)
    fail ("a small block refuses a payload");
}

static void
check_layout (void)
{
  static uint8_t b[R5L_BLOCK_BYTES], copy[R5L_BLOCK_BYTES];
  uint32_t u = r5l_uuid_checksum (uuid);
  struct r5l_meta m, d;
  char err[200];

  sample (&m);
  if (r5l_meta_pages (&m) != 4)
    fail ("pages %llu, not 4", (unsigned long long)r5l_meta_pages (&m));
  r5l_meta_encode (&m, u, b);
  if (le32_get (b) != 0x6433c509 || b[8] != 1 || b[9] || le16_get (b + 10)
      || le32_get (b + 12) != 32 + 20 + 20 + 24 + 16
      || le64_get (b + 16) != m.seq || le64_get (b + 24) != 4096)
    fail ("magic, version, meta_size, seq or position not where md_p.h "
          "has them");
  /* Payload 0 at 32: type, flags, size (sectors), location, checksum. */
  if (le16_get (b + 32) != 0 || le16_get (b + 34) != 0 || le32_get (b + 36) != 8
      || le64_get (b + 40) != 123456 || le32_get (b + 48) != 0x11111111)
    fail ("data payload not where md_p.h has it");
  /* Parity at 72: 16 sectors, P's then Q's checksum. */
  if (le16_get (b + 72) != 1 || le32_get (b + 76) != 16
      || le64_get (b + 80) != 2048 || le32_get (b + 88) != 0x22222222
      || le32_get (b + 92) != 0x33333333)
    fail ("parity payload not where md_p.h has it");
  /* Flush at 96: size in bytes, then the stripes. */
  if (le16_get (b + 96) != 2 || le32_get (b + 100) != 8
      || le64_get (b + 104) != 777)
    fail ("flush payload not where md_p.h has it");
  memcpy (copy, b, sizeof copy);
  le32_put (copy + 4, 0);
  if (le32_get (b + 4) != reference_crc (u, copy, sizeof copy))
    fail ("meta checksum 0x%08x, reference 0x%08x", le32_get (b + 4),
          reference_crc (u, copy, sizeof copy));
  if (r5l_meta_decode (b, u, &d, err, sizeof err) == -1)
    fail ("a block just encoded is refused: %s", err);
  else if (memcmp (&d, &m, sizeof d) != 0)
    fail ("the meta block does not round-trip");
}

/* A block fills up at md's count: 203 data payloads (md's member
 * limit), and no more. */
static void
check_full (void)
{
  static uint8_t b[R5L_BLOCK_BYTES];
  struct r5l_meta m, d;
  char err[200];
  unsigned n = 0;

  r5l_meta_init (&m, 1, 0);
  while (r5l_meta_add_data (&m, 8ULL * n, n) == 0)
    n++;
  if (n != 203)
    fail ("a block takes %u data payloads, not 203", n);
  r5l_meta_encode (&m, 5, b);
  if (r5l_meta_decode (b, 5, &d, err, sizeof err) == -1 || d.npayloads != n)
    fail ("a full block does not decode: %s", err);
  r5l_meta_init (&m, 1, 0);
  n = 0;
  while (r5l_meta_add_flush (&m, n) == 0)
    n++;
  if (n != 254)
    fail ("a block takes %u flush payloads, not 254", n);
  r5l_meta_encode (&m, 5, b);
  if (r5l_meta_decode (b, 5, &d, err, sizeof err) == -1 || d.nflush != n)
    fail ("a block of flushes does not decode: %s", err);
}

/* Re-checksum a block after editing it. */
static void
reseal (uint8_t *b, uint32_t u)
{
  le32_put (b + 4, 0);
  le32_put (b + 4, reference_crc (u, b, R5L_BLOCK_BYTES));
}

static void
expect_refused (const uint8_t *b, uint32_t u, const char *why)
{
  struct r5l_meta d;
  char err[200] = "";

  if (r5l_meta_decode (b, u, &d, err, sizeof err) == 0 || !strstr (err, why))
    fail ("not refused for \"%s\": %s", why, err);
}

static void
check_refused (void)
{
  static uint8_t b[R5L_BLOCK_BYTES];
  uint32_t u = r5l_uuid_checksum (uuid);
  struct r5l_meta m;

  sample (&m);
  r5l_meta_encode (&m, u, b);
  b[3000] ^= 1;
  expect_refused (b, u, "checksum");
  b[3000] ^= 1;
  expect_refused (b, u + 1, "checksum"); /* another array's */
  le32_put (b, 0x6433c508);
  reseal (b, u);
  expect_refused (b, u, "magic");
  le32_put (b, R5L_MAGIC);
  b[8] = 2;
  reseal (b, u);
  expect_refused (b, u, "version");
  b[8] = 1;
  le32_put (b + 12, 4097);
  reseal (b, u);
  expect_refused (b, u, "meta_size");
  /* meta_size ends inside the parity payload. */
  le32_put (b + 12, 80);
  reseal (b, u);
  expect_refused (b, u, "runs past");
  le32_put (b + 12, 32 + 20 + 20 + 24 + 16);
  le16_put (b + 72, 7);
  reseal (b, u);
  expect_refused (b, u, "unknown type");
  le16_put (b + 72, 1);
  le32_put (b + 76, 24);
  reseal (b, u);
  expect_refused (b, u, "size 24");
  le32_put (b + 76, 16);
  le32_put (b + 36, 16); /* a data payload of two pages */
  reseal (b, u);
  expect_refused (b, u, "size 16");
  le32_put (b + 36, 8);
  le32_put (b + 100, 0);
  reseal (b, u);
  expect_refused (b, u, "flush");
  /* A size that wraps 32 bits when added to the offset (fuzz). */
  le32_put (b + 100, 0xfffffff8U);
  reseal (b, u);
  expect_refused (b, u, "flush");
  memset (b, 0, sizeof b);
  expect_refused (b, 0, "magic");
}

int
main (void)
{
  check_crc ();
  check_layout ();
  check_full ();
  check_refused ();
  if (failures) {
    printf ("%u failures\n", failures);
    return 1;
  }
  printf ("journal-format: md's meta block layout, checksums and "
          "refusals\n");
  return 0;
}
