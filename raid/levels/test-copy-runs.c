/* nbdraid: a RAID10 request reads each member it reads in one piece
 * (io-copies.c pick_copy).  RAID10 n2 over six member files, 64K
 * chunks: a 1 MiB read holds each pair's units 0, 3, 6... one after
 * the other on both of its disks, so reading them from alternating
 * copies makes a member request of every unit (a member behind a 2 ms
 * delay then read at 0.7 of its rate).  Every member read is recorded;
 * each request must read every member it touches in one contiguous
 * range, one member of each pair, and requests take the copies in
 * turn so that two of them read all six members, unless a copy has
 * operations in flight: then its partner serves, whatever the turn.
 * The bytes must be the ones written.
 */
#include <config.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "test-array.h"
#include "test-member-tap.h"
#include "test-report.h"

#define MEMBERS 6
#define MEMBER_BYTES (8 * 1024 * 1024)
#define CHUNK_BYTES (64 * 1024)
#define READ_BYTES (1024 * 1024)
#define MAX_READS 256
/* Reads below this are metadata (the owner heartbeat reads the
 * superblock block every second): not recorded.  Data starts at 1 MiB
 * or later (mdadm's smallest data offset). */
#define DATA_FROM (1024 * 1024)

struct range {
  uint64_t off, len;
};

/* A member as the test sees it: the real ops, recording data reads. */
struct model {
  struct member_tap tap;
  struct range reads[MAX_READS];
  unsigned nreads;
};

static struct model models[MEMBERS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct model *
model_of (const struct member *m)
{
  unsigned i;

  for (i = 0; i < MEMBERS - 1 && models[i].tap.m != m; i++)
    ;
  return &models[i];
}

static int
model_pread (struct member *m, void *buf, size_t len, uint64_t off)
{
  struct model *md = model_of (m);

  if (off >= DATA_FROM) {
    pthread_mutex_lock (&lock);
    if (md->nreads < MAX_READS)
      md->reads[md->nreads++] = (struct range){ off, len };
    pthread_mutex_unlock (&lock);
  }
  return md->tap.real->pread (m, buf, len, off);
}

static void
model_wrap (struct raid_array *a)
{
  unsigned i;

  for (i = 0; i < MEMBERS; i++)
    member_tap (&models[i].tap, a->slots[i].io, model_pread);
}

static void
model_unwrap (void)
{
  unsigned i;

  for (i = 0; i < MEMBERS; i++)
    member_untap (&models[i].tap);
}

static int
by_offset (const void *x, const void *y)
{
  const struct range *a = x, *b = y;

  return a->off < b->off ? -1 : a->off > b->off;
}

/* Did member i's reads since the last call cover one contiguous range
 * (none is fine)?  Forgets them; sets *read if there were any. */
static bool
one_piece (unsigned i, bool *read)
{
  struct model *md = &models[i];
  unsigned r;
  bool ok = true;

  qsort (md->reads, md->nreads, sizeof md->reads[0], by_offset);
  for (r = 1; r < md->nreads; r++)
    if (md->reads[r].off != md->reads[r - 1].off + md->reads[r - 1].len)
      ok = false;
  *read = md->nreads > 0;
  md->nreads = 0;
  return ok;
}

/* Read 1 MiB at off, check it against data, and check the shape of
 * its member reads; adds the members it read to used. */
static void
read_in_pieces (struct raid_array *a, const uint8_t *data, uint64_t off,
                bool used[MEMBERS])
{
  static uint8_t buf[READ_BYTES];
  unsigned i, pairs = 0;

  if (raid_read (a, buf, READ_BYTES, off) == -1
      || memcmp (buf, data + off, READ_BYTES) != 0) {
    fail ("read at %" PRIu64 " failed or differs", off);
    return;
  }
  for (i = 0; i < MEMBERS; i += 2) {
    bool first, second;

    if (!one_piece (i, &first))
      fail ("read at %" PRIu64 ": member %u read in pieces", off, i);
    if (!one_piece (i + 1, &second))
      fail ("read at %" PRIu64 ": member %u read in pieces", off, i + 1);
    if (first != second)
      pairs++;
    used[i] |= first;
    used[i + 1] |= second;
  }
  if (pairs != MEMBERS / 2)
    fail ("read at %" PRIu64 ": %u of %u pairs read from one member only", off,
          pairs, MEMBERS / 2);
}

/* With member 0 holding operations in flight, reads of the first
 * chunk (on members 0 and 1) all go to member 1, turn after turn. */
static void
busy_copy_passed_over (struct raid_array *a, const uint8_t *data)
{
  static uint8_t buf[CHUNK_BYTES];
  struct member *busy = a->slots[0].io;
  unsigned r;
  bool read0, read1;

  __atomic_add_fetch (&busy->ops_in_flight, 8, __ATOMIC_RELAXED);
  for (r = 0; r < 4; r++)
    if (raid_read (a, buf, CHUNK_BYTES, 0) == -1
        || memcmp (buf, data, CHUNK_BYTES) != 0)
      fail ("busy copy: read %u failed or differs", r);
  __atomic_sub_fetch (&busy->ops_in_flight, 8, __ATOMIC_RELAXED);
  one_piece (0, &read0);
  one_piece (1, &read1);
  if (read0 || !read1)
    fail ("busy copy: member 0 with 8 operations in flight was read%s",
          read1 ? "" : ", member 1 not");
}

int
main (void)
{
  char dir[] = "/tmp/nbdraid-test-copy-runs.XXXXXX";
  static const struct raid_create_options clean = { .assume_clean = true };
  static uint8_t data[2 * READ_BYTES];
  struct raid_config cfg;
  struct raid_array *a;
  bool used[MEMBERS] = { false };
  char err[1024], cmd[600];
  unsigned seed = 1, i;

  if (!mkdtemp (dir)) {
    perror ("mkdtemp");
    return 1;
  }
  a = test_array (dir, "near", "level = 10\nchunk = 64K\n", MEMBERS,
                  MEMBER_BYTES, &clean, &cfg, err, sizeof err);
  if (!a)
    fail ("near: %s", err);
  else if (raid_start (a) == -1)
    fail ("near: raid_start");
  else {
    for (i = 0; i < sizeof data; i++)
      data[i] = (uint8_t)rand_r (&seed);
    if (raid_write (a, data, sizeof data, 0, true) == -1)
      fail ("near: write");
    else {
      model_wrap (a);
      read_in_pieces (a, data, 0, used);
      read_in_pieces (a, data, READ_BYTES, used);
      busy_copy_passed_over (a, data);
      model_unwrap ();
      for (i = 0; i < MEMBERS && used[i]; i++)
        ;
      if (i < MEMBERS)
        fail ("two requests never read member %u: they do not take the "
              "copies in turn",
              i);
    }
  }
  if (a) {
    raid_close (a);
    raid_config_free (&cfg);
  }
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "warning: could not remove %s\n", dir);
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
