/* nbdraid: test the write journal's replay (journal-replay.c) against a
 * model: a ring in memory written with the format's encoder, members
 * as a table of the pages written where.  Replayed: every block from
 * the tail's in log order, a later entry of a stripe winning; the log
 * wrapping round the ring.  Stopped, and named: a meta block whose
 * checksum is wrong, a block of an older sequence, one at another
 * position.  Dropped, named, and read past (as md does): a block whose
 * page fails its checksum.  md's write-back logs: data without parity kept
 * (not written), parity in a later block than its data, data after
 * parity, a flush payload. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal-format.h"
#include "journal-replay.h"
#include "le.h"
#include "test-report.h"

#define BLOCK R5L_BLOCK_BYTES
#define RING_BLOCKS 64
#define UUID_SUM 0x12345678U
/* The model's geometry: a stripe of 4 data chunks of 8 sectors (one
 * page), so array sector s is in stripe s / 32 at member sector
 * (s / 32) * 8. */
#define STRIPE_SECTORS 32

static uint8_t ring[RING_BLOCKS * BLOCK];

/* What the replay wrote: (kind, location) -> the page's first byte. */
struct written {
  int kind; /* 0 data, 1 P, 2 Q */
  uint64_t location;
  uint8_t tag;
};
static struct written w[1000];
static unsigned nw;
/* What the replay kept: (sector, tag), in order. */
static struct written kept[100];
static unsigned nkept;

static int
read_block (void *opaque, uint64_t pos, uint8_t *block)
{
  (void)opaque;
  if (pos % BLOCK || pos >= sizeof ring) {
    errno = EINVAL;
    return -1;
  }
  memcpy (block, ring + pos, BLOCK);
  return 0;
}

static uint64_t
stripe_of (void *opaque, uint64_t sector)
{
  (void)opaque;
  return sector / STRIPE_SECTORS * 8;
}

static void
record (int kind, uint64_t location, const uint8_t *page)
{
  unsigned i;

  for (i = 1; i < BLOCK; i++)
    if (page[i] != page[0]) {
      fail ("a page replayed torn");
      break;
    }
  if (nw < sizeof w / sizeof w[0])
    w[nw++] = (struct written){ kind, location, page[0] };
}

static int
write_data (void *opaque, uint64_t sector, const uint8_t *page, char *err,
            size_t errlen)
{
  (void)opaque, (void)err, (void)errlen;
  record (0, sector, page);
  return 0;
}

static int
write_parity (void *opaque, uint64_t stripe, unsigned which,
              const uint8_t *page, char *err, size_t errlen)
{
  (void)opaque, (void)err, (void)errlen;
  record (1 + (int)which, stripe, page);
  return 0;
}

static int
keep_data (void *opaque, uint64_t sector, const uint8_t *page, char *err,
           size_t errlen)
{
  (void)opaque, (void)err, (void)errlen;
  if (nkept < sizeof kept / sizeof kept[0])
    kept[nkept++] = (struct written){ 0, sector, page[0] };
  return 0;
}

static const struct journal_replay_ops ops = {
  .read_block = read_block,
  .stripe_of = stripe_of,
  .write_data = write_data,
  .write_parity = write_parity,
  .keep_data = keep_data,
};

/* The model's latest tag at (kind, location), or -1. */
static int
latest (int kind, uint64_t location)
{
  int t = -1;
  unsigned i;

  for (i = 0; i < nw; i++)
    if (w[i].kind == kind && w[i].location == location)
      t = w[i].tag;
  return t;
}

/* Append a meta block at byte *pos (seq) logging one RAID6 stripe row:
 * data page at each of sectors[0..n-1] tagged `tag`, P tagged tag+1, Q
 * tag+2; advance *pos past its pages, wrapping.  With data_only, no
 * parity (write-back). */
static uint64_t
log_row (uint64_t *pos, uint64_t seq, const uint64_t *sectors, unsigned n,
         uint8_t tag, bool data_only)
{
  uint8_t page[BLOCK], block[BLOCK];
  uint32_t sums[2];
  struct r5l_meta m;
  uint64_t at = *pos, p;
  unsigned i;

  r5l_meta_init (&m, seq, at / 512);
  p = (at + BLOCK) % sizeof ring;
  memset (page, tag, sizeof page);
  for (i = 0; i < n; i++) {
    r5l_meta_add_data (&m, sectors[i], r5l_page_checksum (UUID_SUM, page));
    memcpy (ring + p, page, BLOCK);
    p = (p + BLOCK) % sizeof ring;
  }
  if (!data_only) {
    for (i = 0; i < 2; i++) {
      memset (page, tag + 1 + i, sizeof page);
      sums[i] = r5l_page_checksum (UUID_SUM, page);
      memcpy (ring + p, page, BLOCK);
      p = (p + BLOCK) % sizeof ring;
    }
    r5l_meta_add_parity (&m, stripe_of (NULL, sectors[0]), 2, sums);
  }
  r5l_meta_encode (&m, UUID_SUM, block);
  memcpy (ring + at, block, BLOCK);
  *pos = p;
  return at;
}

/* Append a meta block at *pos logging only the parity (tags tag+1,
 * tag+2) of the row at member sector `row` (md's write-out of a cached
 * stripe), or with flush, a flush payload naming the row. */
static void
log_parity (uint64_t *pos, uint64_t seq, uint64_t row, uint8_t tag,
            bool flush)
{
  uint8_t page[BLOCK], block[BLOCK];
  uint32_t sums[2];
  struct r5l_meta m;
  uint64_t at = *pos, p = (at + BLOCK) % sizeof ring;
  unsigned i;

  r5l_meta_init (&m, seq, at / 512);
  if (flush)
    r5l_meta_add_flush (&m, row);
  else {
    for (i = 0; i < 2; i++) {
      memset (page, tag + 1 + i, sizeof page);
      sums[i] = r5l_page_checksum (UUID_SUM, page);
      memcpy (ring + p, page, BLOCK);
      p = (p + BLOCK) % sizeof ring;
    }
    r5l_meta_add_parity (&m, row, 2, sums);
  }
  r5l_meta_encode (&m, UUID_SUM, block);
  memcpy (ring + at, block, BLOCK);
  *pos = p;
}

static int
replay (uint64_t tail, uint64_t seq, struct journal_replay_result *res,
        char *err)
{
  nw = 0;
  nkept = 0;
  return journal_replay (UUID_SUM, sizeof ring, 2, tail, seq, &ops, res, err,
                         200);
}

/* Five blocks from the tail at byte 40 blocks in, wrapping at 64, all
 * replayed in order (the tail's too, as md does); stripes 0 and 1 are
 * logged twice and end as the later says. */
static void
check_replay (void)
{
  struct journal_replay_result res;
  uint64_t pos = 40 * BLOCK, s0[] = { 0, 8 }, s1[] = { 40 }, s2[] = { 16 };
  uint64_t end;
  char err[200];

  memset (ring, 0, sizeof ring);
  log_row (&pos, 100, s1, 1, 10, false); /* the tail's block */
  log_row (&pos, 101, s0, 2, 20, false);
  log_row (&pos, 102, s1, 1, 30, false);
  log_row (&pos, 103, s2, 1, 40, false);
  log_row (&pos, 104, s0, 2, 50, false); /* wraps past 64 blocks */
  end = pos;
  if (replay (40 * BLOCK, 100, &res, err) == -1) {
    fail ("replay refused: %s", err);
    return;
  }
  if (res.blocks != 4 || res.kept != 0 || res.stripes != 5
      || res.end_pos != end || res.end_seq != 105)
    fail ("replayed %u (kept %u, %u stripes), ended at %llu seq %llu; "
          "want 4, 0, 5, %llu, 105",
          res.blocks, res.kept, res.stripes, (unsigned long long)res.end_pos,
          (unsigned long long)res.end_seq, (unsigned long long)end);
  if (latest (0, 0) != 50 || latest (0, 8) != 50 || latest (1, 0) != 51
      || latest (2, 0) != 52)
    fail ("stripe 0 does not end as its later entry says: %d %d %d %d",
          latest (0, 0), latest (0, 8), latest (1, 0), latest (2, 0));
  if (latest (0, 40) != 30 || latest (1, 8) != 31 || latest (0, 16) != 40)
    fail ("stripes 1 and 2: %d %d %d", latest (0, 40), latest (1, 8),
          latest (0, 16));
  if (w[0].tag != 10)
    fail ("the tail's own block was not replayed first (first write "
          "tagged %u)",
          w[0].tag);
  if (!strstr (res.stopped, "magic"))
    fail ("the end of the log is not named: %s", res.stopped);
}

/* Damage in the third block's meta block: replay stops there, names
 * it, and writes nothing of it or after it.  Damage in its page: it is
 * dropped, named, and the fourth replayed. */
static void
check_stops (void)
{
  struct journal_replay_result res;
  uint64_t pos = 0, s0[] = { 0 }, s1[] = { 40 }, third, fourth;
  char err[200];

  memset (ring, 0, sizeof ring);
  log_row (&pos, 7, s0, 1, 10, false);
  log_row (&pos, 8, s1, 1, 20, false);
  third = log_row (&pos, 9, s0, 1, 30, false);
  fourth = log_row (&pos, 10, s1, 1, 40, false);
  (void)fourth;
  ring[third + 100] ^= 1; /* the meta block's checksum */
  if (replay (0, 7, &res, err) == -1)
    fail ("refused: %s", err);
  else if (res.blocks != 1 || res.end_pos != third || res.end_seq != 9
           || !strstr (res.stopped, "checksum")
           || !strstr (res.stopped, "sector 64:"))
    fail ("a torn meta block: replayed %u, ended at %llu: %s", res.blocks,
          (unsigned long long)res.end_pos, res.stopped);
  else if (latest (0, 0) != 10 || latest (0, 40) != 20)
    fail ("a torn meta block: wrote past it or not before it");
  ring[third + 100] ^= 1;
  ring[third + BLOCK + 7] ^= 1; /* its data page */
  if (replay (0, 7, &res, err) == -1)
    fail ("refused: %s", err);
  else if (res.blocks != 3 || res.damaged != 1 || res.end_pos != pos
           || !strstr (res.damage, "sector 64 (seq 9): payload 0 page 0 "
                                   "checksum"))
    fail ("a torn page: read %u, dropped %u, ended at %llu: %s",
          res.blocks, res.damaged, (unsigned long long)res.end_pos,
          res.damage);
  else if (latest (0, 0) != 10 || latest (0, 40) != 40)
    fail ("a torn page: its block written (%d), or the next not (%d)",
          latest (0, 0), latest (0, 40));
  ring[third + BLOCK + 7] ^= 1;
  /* An old block where the next should be. */
  log_row (&third, 3, s0, 1, 30, false);
  if (replay (0, 7, &res, err) == -1 || res.blocks != 1
      || !strstr (res.stopped, "seq 3"))
    fail ("an old block is replayed: %u: %s", res.blocks, res.stopped);
}

/* md's write-back log: stripe 0 written through, then cached again
 * (data after parity: the first update is written, the second kept);
 * stripe 1 cached twice (the later page kept); stripe 2 written then
 * flushed (nothing left to write); stripe 3 cached, then its parity
 * logged alone (written with the data of the earlier block). */
static void
check_write_back (void)
{
  struct journal_replay_result res;
  uint64_t pos = 0, s0[] = { 0 }, s1[] = { 40 }, s2[] = { 64 }, s3[] = { 96 };
  char err[200] = "";

  memset (ring, 0, sizeof ring);
  log_row (&pos, 1, s0, 1, 10, false);
  log_row (&pos, 2, s0, 1, 20, true);
  log_row (&pos, 3, s1, 1, 30, true);
  log_row (&pos, 4, s1, 1, 35, true);
  log_row (&pos, 5, s2, 1, 40, false);
  log_parity (&pos, 6, stripe_of (NULL, 64), 0, true);
  log_row (&pos, 7, s3, 1, 50, true);
  log_parity (&pos, 8, stripe_of (NULL, 96), 60, false);
  if (replay (0, 1, &res, err) == -1) {
    fail ("write-back log refused: %s", err);
    return;
  }
  if (res.blocks != 7 || res.stripes != 2 || res.kept != 2 || nkept != 2)
    fail ("write-back: %u blocks, %u stripes, %u kept; want 7, 2, 2",
          res.blocks, res.stripes, res.kept);
  if (latest (0, 0) != 10 || latest (1, 0) != 11 || latest (2, 0) != 12)
    fail ("stripe 0's first update: %d %d %d", latest (0, 0), latest (1, 0),
          latest (2, 0));
  if (nkept == 2
      && (kept[0].location != 0 || kept[0].tag != 20
          || kept[1].location != 40 || kept[1].tag != 35))
    fail ("kept (%llu, %u), (%llu, %u); want (0, 20), (40, 35)",
          (unsigned long long)kept[0].location, kept[0].tag,
          (unsigned long long)kept[1].location, kept[1].tag);
  if (latest (0, 40) != -1 || latest (0, 64) != -1 || latest (1, 16) != -1)
    fail ("cached or flushed stripes written: %d %d %d", latest (0, 40),
          latest (0, 64), latest (1, 16));
  if (latest (0, 96) != 50 || latest (1, 24) != 61 || latest (2, 24) != 62)
    fail ("stripe 3's parity in a later block: %d %d %d", latest (0, 96),
          latest (1, 24), latest (2, 24));
}

int
main (void)
{
  check_replay ();
  check_stops ();
  check_write_back ();
  if (failures) {
    printf ("%u failures\n", failures);
    return 1;
  }
  printf ("journal-replay: log order, the tail's block, wrap, stops at a "
          "torn meta block and old blocks, drops torn pages, md's "
          "write-back logs\n");
  return 0;
}
