/* nbdraid: test the owner record's encoding (owner.h): it round-trips,
 * sits in the superblock block's last sector and nowhere else, and a
 * sector that is torn, foreign or blank is no record.  The CRC32C is
 * computed here bit by bit, independently of ISA-L's. */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "owner.h"
#include "test-report.h"

/* CRC32C (Castagnoli, reflected 0x82f63b78) as ISA-L's crc32_iscsi
 * with a seed of 0 computes it: no final inversion. */
static uint32_t
reference_crc32c (const uint8_t *p, size_t n)
{
  uint32_t crc = 0;
  size_t i;
  int k;

  for (i = 0; i < n; i++) {
    crc ^= p[i];
    for (k = 0; k < 8; k++)
      crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78 : crc >> 1;
  }
  return crc;
}

static struct owner_record
sample (void)
{
  struct owner_record r = {
    .owner_id = 0x0123456789abcdefULL, .seq = 42, .time_ms = 1765000000123ULL,
    .interval_ms = 1000, .state = OWNER_SERVING, .pid = 4242,
  };
  unsigned i;

  for (i = 0; i < 16; i++)
    r.set_uuid[i] = (uint8_t) (i * 17);
  snprintf (r.host, sizeof r.host, "%s", "shelf-a.example.org");
  return r;
}

static void
test_round_trip (void)
{
  uint8_t block[4096], before[4096];
  struct owner_record in = sample (), out;

  memset (block, 0xa5, sizeof block);
  memcpy (before, block, sizeof block);
  owner_encode (&in, block);
  if (memcmp (block, before, OWNER_BLOCK_OFFSET) != 0)
    fail ("encode wrote before its sector (the superblock's bytes)");
  if (memcmp (block + OWNER_BLOCK_OFFSET, "nbdraid owner v1", 16) != 0)
    fail ("no magic at the sector's start");
  if (le32_get (block + 4092) !=
      reference_crc32c (block + OWNER_BLOCK_OFFSET, OWNER_BYTES - 4))
    fail ("the CRC is not CRC32C of the sector's first 508 bytes");
  if (le64_get (block + OWNER_BLOCK_OFFSET + 40) != 42 ||
      le32_get (block + OWNER_BLOCK_OFFSET + 64) != 4242)
    fail ("seq or pid not at their offsets");
  if (owner_decode (block, &out) != 0)
    fail ("decode refused what encode wrote");
  else if (memcmp (out.set_uuid, in.set_uuid, 16) || out.owner_id != in.owner_id ||
           out.seq != in.seq || out.time_ms != in.time_ms ||
           out.interval_ms != in.interval_ms || out.state != in.state ||
           out.pid != in.pid || strcmp (out.host, in.host) != 0)
    fail ("decode gave other fields than were encoded");
}

static void
test_not_a_record (void)
{
  uint8_t block[4096];
  struct owner_record in = sample (), out;
  unsigned byte;

  memset (block, 0, sizeof block);
  if (owner_decode (block, &out) != -1)
    fail ("a blank sector decoded as a record");
  for (byte = 0; byte < OWNER_BYTES; byte += 37) {
    owner_encode (&in, block);
    block[OWNER_BLOCK_OFFSET + byte] ^= 0x10;
    if (owner_decode (block, &out) != -1)
      fail ("a record with byte %u flipped decoded", byte);
  }
  /* A torn write: the sector half old, half new. */
  owner_encode (&in, block);
  in.seq++;
  in.time_ms += 1000;
  {
    uint8_t newer[4096];
    memcpy (newer, block, sizeof newer);
    owner_encode (&in, newer);
    memcpy (block + OWNER_BLOCK_OFFSET + 256, newer + OWNER_BLOCK_OFFSET + 256,
            256);
    memcpy (block + OWNER_BLOCK_OFFSET, newer + OWNER_BLOCK_OFFSET, 44);
    if (owner_decode (block, &out) != -1)
      fail ("a torn record decoded");
  }
}

static void
test_fits (void)
{
  /* md: the superblock is 256 + 2*max_dev bytes from the block's start. */
  if (!owner_fits (128) || !owner_fits (384))
    fail ("mdadm's max_dev (128) or the 1K superblock (384) leaves no room");
  if (owner_fits (1920) || owner_fits (OWNER_MAX_DEV + 1))
    fail ("a superblock reaching into the sector was said to fit");
  if (256 + 2 * OWNER_MAX_DEV > OWNER_BLOCK_OFFSET)
    fail ("OWNER_MAX_DEV lets the superblock overlap the record");
}

int
main (void)
{
  test_round_trip ();
  test_not_a_record ();
  test_fits ();
  if (failures) {
    printf ("%u failures\n", failures);
    return 1;
  }
  printf ("owner record: ok\n");
  return 0;
}
