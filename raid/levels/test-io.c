/* nbdraid: the engine's read/write/zero paths in-process, against a
 * model in memory, for every level family, and the array's count of
 * them.  Small enough to run under valgrind; two threads write disjoint
 * halves at once so the I/O pool, the stripe locks and the counters
 * are exercised too.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test-array.h"
#include "test-report.h"

#define OPS_PER_THREAD 150

struct worker {
  struct raid_array *a;
  uint8_t *model;
  uint64_t lo, hi;              /* this thread's half of the array */
  unsigned seed;
  int failed;
  struct raid_requests done;    /* what it asked, as the array counts */
};

static uint64_t
rnd (unsigned *seed, uint64_t n)
{
  return n ? ((uint64_t) rand_r (seed) << 31 ^ (uint64_t) rand_r (seed)) % n
    : 0;
}

static void *
work (void *arg)
{
  struct worker *w = arg;
  static const uint64_t lens[] = { 1, 511, 4096, 5000, 20000, 70000 };
  uint8_t *buf = malloc (70000);
  int i;

  for (i = 0; i < OPS_PER_THREAD && !w->failed; i++) {
    uint64_t len = lens[rnd (&w->seed, 6)], off, j;
    if (len > w->hi - w->lo)
      len = w->hi - w->lo;
    off = w->lo + rnd (&w->seed, w->hi - w->lo - len + 1);
    switch (rnd (&w->seed, 4)) {
    case 0:
      memset (w->model + off, 0, len);
      w->failed |= raid_zero (w->a, len, off, false);
      w->done.zeroes++;
      w->done.zero_bytes += len;
      break;
    case 1:
      w->failed |= raid_read (w->a, buf, len, off);
      w->done.reads++;
      w->done.read_bytes += len;
      if (memcmp (buf, w->model + off, len) != 0) {
        fail ("read at %" PRIu64 "+%" PRIu64, off, len);
        w->failed = 1;
      }
      break;
    default:
      for (j = 0; j < len; j++)
        buf[j] = (uint8_t) rand_r (&w->seed);
      memcpy (w->model + off, buf, len);
      w->failed |= raid_write (w->a, buf, len, off, i % 10 == 0);
      w->done.writes++;
      w->done.write_bytes += len;
    }
  }
  free (buf);
  return NULL;
}

struct extent_check {
  const uint8_t *model;
  uint64_t covered, holes;
};

/* An extent called a hole must read as zeros: the model's bytes there
 * are zero (a client copying the volume skips holes). */
static int
check_extent (void *opaque, uint64_t offset, uint64_t len, bool hole)
{
  struct extent_check *c = opaque;
  uint64_t i;

  if (offset != c->covered) {
    fail ("extent at %" PRIu64 ", expected %" PRIu64,
          offset, c->covered);
    return -1;
  }
  for (i = 0; hole && i < len; i++)
    if (c->model[offset + i]) {
      fail ("data at %" PRIu64 " in the hole %" PRIu64
            "+%" PRIu64, offset + i, offset, len);
      return -1;
    }
  c->covered += len;
  c->holes += hole ? len : 0;
  return 0;
}

/* Walk the extents of the whole array (raid_extents may stop early);
 * true if they cover it and call no written byte a hole.  *holes:
 * the bytes they call holes. */
static bool
extents_right (struct raid_array *a, const uint8_t *model, uint64_t size,
               uint64_t *holes)
{
  struct extent_check c = { .model = model };

  while (c.covered < size)
    if (raid_extents (a, size - c.covered, c.covered, check_extent, &c))
      return false;
  *holes = c.holes;
  return true;
}

/* The array counted every request of the two workers and one more
 * read of size bytes, none failed, and their time is not zero: the
 * counters lose nothing to threads adding at once. */
static bool
counted_right (struct raid_array *a, const struct worker w[2],
               uint64_t size)
{
  struct raid_status *st = malloc (sizeof *st);
  struct raid_requests want = { .reads = 1, .read_bytes = size };
  const struct raid_requests *got;
  bool right;
  unsigned i;

  if (!st)
    return false;
  for (i = 0; i < 2; i++) {
    want.reads += w[i].done.reads;
    want.read_bytes += w[i].done.read_bytes;
    want.writes += w[i].done.writes;
    want.write_bytes += w[i].done.write_bytes;
    want.zeroes += w[i].done.zeroes;
    want.zero_bytes += w[i].done.zero_bytes;
  }
  raid_get_status (a, st);
  got = &st->requests;
  right = got->reads == want.reads && got->read_bytes == want.read_bytes &&
    got->writes == want.writes && got->write_bytes == want.write_bytes &&
    got->zeroes == want.zeroes && got->zero_bytes == want.zero_bytes &&
    got->failed == 0 && got->busy_ns > 0 &&
    raid_client_bytes (a) == want.read_bytes + want.write_bytes +
    want.zero_bytes;
  if (!right)
    fail ("counted %" PRIu64 "/%" PRIu64 "/%" PRIu64 " reads/writes/zeroes "
          "of %" PRIu64 "/%" PRIu64 "/%" PRIu64 " bytes, %" PRIu64
          " failed; asked %" PRIu64 "/%" PRIu64 "/%" PRIu64 " of %" PRIu64
          "/%" PRIu64 "/%" PRIu64, got->reads, got->writes, got->zeroes,
          got->read_bytes, got->write_bytes, got->zero_bytes, got->failed,
          want.reads, want.writes, want.zeroes, want.read_bytes,
          want.write_bytes, want.zero_bytes);
  free (st);
  return right;
}

/* After a clean stop, do the two copies of a RAID1 hold the same
 * bytes (past the superblock, bitmap and data offset: the data areas
 * start at the same place on both)? */
static bool
copies_same (const char *dir, const char *name, uint64_t member_bytes)
{
  char path[2][512];
  FILE *fp[2];
  uint8_t buf[2][65536];
  size_t n[2];
  bool same = true;
  unsigned i;

  for (i = 0; i < 2; i++) {
    snprintf (path[i], sizeof path[i], "%s/%s-%u.img", dir, name, i);
    fp[i] = fopen (path[i], "r");
  }
  if (!fp[0] || !fp[1])
    same = false;
  /* Skip the metadata: superblock (4K in) and bitmap, which differ in
   * device fields; the data starts at 1M for members this small. */
  for (i = 0; same && i < 2; i++)
    same = fseek (fp[i], 1024 * 1024, SEEK_SET) == 0;
  while (same) {
    n[0] = fread (buf[0], 1, sizeof buf[0], fp[0]);
    n[1] = fread (buf[1], 1, sizeof buf[1], fp[1]);
    same = n[0] == n[1] && memcmp (buf[0], buf[1], n[0]) == 0;
    if (n[0] == 0)
      break;
  }
  for (i = 0; i < 2; i++)
    if (fp[i])
      fclose (fp[i]);
  return same && member_bytes > 0;
}

/* Create an array in dir of members of member_bytes (the last with
 * last_flags), run two writers, check every byte. */
static int
run_case_sized (const char *dir, const char *name, const char *array_keys,
                unsigned members, uint64_t member_bytes, const char *last_flags)
{
  struct raid_config cfg;
  char err[1024];
  struct raid_array *a;
  struct worker w[2];
  pthread_t t[2];
  uint8_t *model, *back;
  uint64_t size, holes = 0;
  unsigned i;
  int r = 1;

  a = test_array_flagged (dir, name, array_keys, members, member_bytes,
                          last_flags, NULL, &cfg, err, sizeof err);
  if (!a) {
    fail ("%s: %s", name, err);
    return 1;
  }
  if (raid_start (a) == -1)
    goto out;
  size = raid_size (a);
  model = calloc (1, size);
  back = malloc (size);
  /* Sparse members, nothing written: all of it is holes. */
  if (!extents_right (a, model, size, &holes) || holes != size) {
    fail ("%s: a new array's extents: %" PRIu64
          " of %" PRIu64 " bytes holes", name, holes, size);
    goto out_free;
  }
  for (i = 0; i < 2; i++) {
    w[i] = (struct worker) { .a = a, .model = model, .lo = i * size / 2,
      .hi = (i + 1) * size / 2, .seed = i + 1 };
    pthread_create (&t[i], NULL, work, &w[i]);
  }
  for (i = 0; i < 2; i++)
    pthread_join (t[i], NULL);
  if (w[0].failed || w[1].failed)
    fail ("%s: an operation failed", name);
  else if (raid_flush (a) || raid_read (a, back, size, 0))
    fail ("%s: final read failed", name);
  else if (memcmp (back, model, size) != 0)
    fail ("%s: final contents differ", name);
  else if (!extents_right (a, model, size, &holes))
    fail ("%s: extents", name);
  else if (!counted_right (a, w, size))
    fail ("%s: request counters", name);
  else {
    printf ("ok: %s, %" PRIu64 " bytes, %" PRIu64 " in holes\n", name, size,
            holes);
    r = 0;
  }
 out_free:
  free (model);
  free (back);
 out:
  raid_close (a);
  raid_config_free (&cfg);
  /* Every behind-write landed, in order, before the clean stop. */
  if (r == 0 && last_flags && !copies_same (dir, name, member_bytes)) {
    fail ("%s: the write-mostly copy differs after the stop", name);
    r = 1;
  }
  return r;
}

static int
run_case (const char *dir, const char *name, const char *array_keys,
          unsigned members)
{
  return run_case_sized (dir, name, array_keys, members, 2 * 1024 * 1024, NULL);
}

/* Every stripe row logged on a write journal first; the two writers'
 * logs gather into shared journal writes, and the ring wraps.  (The
 * journal's [members] line follows the keys; the members' section
 * goes on after it.) */
static int
run_journal_case (const char *dir)
{
  char keys[600], journal[512];
  FILE *fp;

  snprintf (journal, sizeof journal, "%s/raid6-journal.img", dir);
  if (!(fp = fopen (journal, "w")) || fclose (fp) != 0
      || truncate (journal, 2 * 1024 * 1024) == -1) {
    fail ("%s: %s", journal, strerror (errno));
    return 1;
  }
  snprintf (keys, sizeof keys,
            "level = 6\nchunk = 8K\nconsistency-policy = journal\n"
            "[members]\njournal = %s\n",
            journal);
  return run_case (dir, "raid6-journal", keys, 5);
}

int
main (void)
{
  char dir[] = "/tmp/nbdraid-test-io.XXXXXX";
  char cmd[600];
  int failed = 0;

  if (!mkdtemp (dir)) {
    perror ("mkdtemp");
    return 1;
  }
  failed |= run_case (dir, "raid0", "level = 0\nchunk = 8K\n", 3);
  failed |= run_case (dir, "raid1", "level = 1\n", 2);
  /* Writes behind, at most 4 outstanding: writers wait for room. */
  failed
      |= run_case_sized (dir, "raid1-behind", "level = 1\nwrite-behind = 4\n",
                         2, 2 * 1024 * 1024, "write-mostly");
  failed |= run_case (dir, "raid5", "level = 5\nchunk = 16K\n", 4);
  /* Every write logs its partial parity first (in a 1 MiB area: the
   * members are bigger). */
  failed |= run_case_sized (dir, "raid5-ppl",
                            "level = 5\nchunk = 16K\n"
                            "consistency-policy = ppl\n",
                            4, 3 * 1024 * 1024, NULL);
  failed |= run_case (dir, "raid6", "level = 6\nlayout = la\nchunk = 4K\n",
                      5);
  failed |= run_journal_case (dir);
  failed |= run_case (dir, "raid10", "level = 10\nlayout = f2\nchunk = 8K\n",
                      3);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "warning: could not remove %s\n", dir);
  return failed || failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
