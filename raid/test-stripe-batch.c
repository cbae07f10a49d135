/* nbdraid: writes gathered on a busy parity stripe (stripe-batch.h).
 *
 * Eight threads write disjoint pieces of the same stripes at once (a
 * barrier before each stripe makes them collide), with random lengths
 * that share 4K pages and sometimes zeros, against a model in memory.
 * The array must read back as the model healthy, then with members
 * failed (so parity written by gathered updates is what reconstructs
 * the data), and gathered writes after a member failed must read back
 * too.  The test fails if no write was ever gathered.
 */
#include <config.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "test-array.h"

#define THREADS 8
#define STRIPES_PER_ROUND 48

struct round {
  struct raid_array *a;
  uint8_t *model;
  uint64_t stripe_bytes, nstripes;
  unsigned seed;                /* shared: every thread draws the same */
  pthread_barrier_t barrier;
  int failed;
};

struct worker {
  struct round *rd;
  unsigned t;
};

/* Cut [0, stripe_bytes) at THREADS-1 random points; thread t's piece is
 * [cut[t], cut[t+1]).  seed is shared, so all threads cut alike. */
static void
cuts (uint64_t stripe_bytes, unsigned *seed, uint64_t *cut)
{
  unsigned i, j;

  cut[0] = 0;
  cut[THREADS] = stripe_bytes;
  for (i = 1; i < THREADS; i++)
    cut[i] = (uint64_t) rand_r (seed) % stripe_bytes;
  for (i = 1; i < THREADS; i++)    /* insertion sort */
    for (j = i; j > 1 && cut[j - 1] > cut[j]; j--) {
      uint64_t x = cut[j];
      cut[j] = cut[j - 1];
      cut[j - 1] = x;
    }
}

static void *
work (void *arg)
{
  struct worker *w = arg;
  struct round *rd = w->rd;
  unsigned seed = rd->seed, mine = rd->seed * 31 + w->t, i;
  uint8_t *buf = malloc (rd->stripe_bytes);
  uint64_t cut[THREADS + 1], j;

  for (i = 0; i < STRIPES_PER_ROUND; i++) {
    uint64_t stripe = (uint64_t) rand_r (&seed) % rd->nstripes;
    uint64_t off, len;
    bool zero = rand_r (&seed) % 5 == 0 && w->t % 2;
    int r;

    cuts (rd->stripe_bytes, &seed, cut);
    off = stripe * rd->stripe_bytes + cut[w->t];
    len = cut[w->t + 1] - cut[w->t];
    pthread_barrier_wait (&rd->barrier);
    if (len == 0)
      continue;
    if (zero) {
      memset (rd->model + off, 0, len);
      r = raid_zero (rd->a, len, off, false);
    }
    else {
      for (j = 0; j < len; j++)
        buf[j] = (uint8_t) rand_r (&mine);
      memcpy (rd->model + off, buf, len);
      r = raid_write (rd->a, buf, len, off, false);
    }
    if (r == -1) {
      fprintf (stderr, "FAIL: write at %" PRIu64 "+%" PRIu64 "\n", off, len);
      rd->failed = 1;
    }
  }
  free (buf);
  return NULL;
}

static int
run_round (struct round *rd, unsigned seed)
{
  struct worker w[THREADS];
  pthread_t t[THREADS];
  unsigned i;

  rd->seed = seed;
  pthread_barrier_init (&rd->barrier, NULL, THREADS);
  for (i = 0; i < THREADS; i++) {
    w[i] = (struct worker) { .rd = rd, .t = i };
    pthread_create (&t[i], NULL, work, &w[i]);
  }
  for (i = 0; i < THREADS; i++)
    pthread_join (t[i], NULL);
  pthread_barrier_destroy (&rd->barrier);
  return rd->failed;
}

static int
matches (const char *name, const char *when, struct round *rd, uint64_t size)
{
  uint8_t *back = malloc (size);
  int r = 0;

  if (raid_read (rd->a, back, size, 0) == -1) {
    fprintf (stderr, "FAIL: %s: reading back %s failed\n", name, when);
    r = 1;
  }
  else if (memcmp (back, rd->model, size) != 0) {
    fprintf (stderr, "FAIL: %s: contents differ %s\n", name, when);
    r = 1;
  }
  free (back);
  return r;
}

static int
fail_member (const char *name, struct raid_array *a, unsigned m)
{
  char role[16], err[256];

  snprintf (role, sizeof role, "%u", m);
  if (raid_admin_fail (a, role, false, err, sizeof err) == -1) {
    fprintf (stderr, "FAIL: %s: failing member %u: %s\n", name, m, err);
    return 1;
  }
  return 0;
}

/* Gathered writes healthy, then with member `first_lost` failed; reads
 * healthy and with one and then (RAID6) two members failed. */
static int
run_case (const char *dir, const char *name, const char *array_keys,
          unsigned members, unsigned parity)
{
  struct raid_config cfg;
  struct raid_array *a;
  struct round rd = { 0 };
  uint64_t size;
  int r = 1;

  a = test_array (dir, name, array_keys, members, 2 * 1024 * 1024, &cfg);
  if (!a)
    return 1;
  if (raid_start (a) == -1)
    goto out;
  size = raid_size (a);
  rd.a = a;
  rd.model = calloc (1, size);
  rd.stripe_bytes = raid_stripe_bytes (a);
  rd.nstripes = size / rd.stripe_bytes;
  if (run_round (&rd, 1) || matches (name, "healthy", &rd, size) ||
      fail_member (name, a, 1) || matches (name, "one failed", &rd, size) ||
      run_round (&rd, 2) ||
      matches (name, "after degraded writes", &rd, size) ||
      (parity == 2 && (fail_member (name, a, 3) ||
                       matches (name, "two failed", &rd, size))))
    goto free;
  if (a->batches.joined == 0) {
    fprintf (stderr, "FAIL: %s: no write was gathered\n", name);
    goto free;
  }
  printf ("ok: %s, %" PRIu64 " writes gathered\n", name, a->batches.joined);
  r = 0;
 free:
  free (rd.model);
 out:
  raid_close (a);
  raid_config_free (&cfg);
  return r;
}

int
main (void)
{
  char dir[] = "/tmp/nbdraid-test-stripe-batch.XXXXXX";
  char cmd[600];
  int failed = 0;

  if (!mkdtemp (dir)) {
    perror ("mkdtemp");
    return 1;
  }
  failed |= run_case (dir, "raid5", "level = 5\nchunk = 16K\n", 4, 1);
  failed |= run_case (dir, "raid6", "level = 6\nchunk = 4K\n", 6, 2);
  failed |= run_case (dir, "raid6-la", "level = 6\nlayout = la\n"
                      "chunk = 8K\n", 7, 2);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "warning: could not remove %s\n", dir);
  return failed;
}
