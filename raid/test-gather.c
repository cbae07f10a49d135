/* nbdraid: writes to one parity stripe gathered into one request.
 *
 * First, deterministically: the stripe's lock is held while three
 * writers register, so the first to get it must write all three as one
 * run (contiguous pieces: a whole stripe, and pieces that split a
 * chunk), and a piece that does not join stays its own writer's.
 * Then eight threads write interleaved pieces over the whole array.
 * Every case reads back against a model, and a check job must find
 * parity consistent everywhere.
 */
#include <config.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "array.h"

#define WRITERS 8

struct writer {
  struct raid_array *a;
  const uint8_t *src;           /* the bytes to write, at their offsets */
  uint64_t offset, count;       /* one write, or ... */
  uint64_t size, piece;         /* ... every WRITERS-th piece of size */
  unsigned index;
  int failed;
};

static void *
write_one (void *arg)
{
  struct writer *w = arg;

  w->failed = raid_write (w->a, w->src + w->offset, w->count, w->offset,
                          false);
  return NULL;
}

static void *
write_interleaved (void *arg)
{
  struct writer *w = arg;
  uint64_t off;

  for (off = w->index * w->piece; off < w->size && !w->failed;
       off += WRITERS * w->piece) {
    uint64_t n = off + w->piece <= w->size ? w->piece : w->size - off;
    w->failed = raid_write (w->a, w->src + off, n, off, false);
  }
  return NULL;
}

static size_t
waiting (struct raid_array *a)
{
  struct gathered *x;
  size_t n = 0;

  pthread_mutex_lock (&a->gather.lock);
  for (x = a->gather.waiting; x; x = x->next)
    n++;
  pthread_mutex_unlock (&a->gather.lock);
  return n;
}

/* Writes src's [ranges[i][0], +ranges[i][1]) at once while stripe 0 is
 * held, and into the model; afterwards the gather counters must have
 * grown by want_runs runs of want_taken writes. */
static int
held_stripe (const char *name, struct raid_array *a, const uint8_t *src,
             uint8_t *model, const uint64_t (*ranges)[2], unsigned n,
             uint64_t want_runs, uint64_t want_taken)
{
  struct writer w[WRITERS];
  pthread_t t[WRITERS];
  uint64_t runs = a->gather.runs, taken = a->gather.taken;
  unsigned i;
  int failed = 0;

  stripe_lock (&a->locks, 0, 0, true);
  for (i = 0; i < n; i++) {
    w[i] = (struct writer) { .a = a, .src = src,
      .offset = ranges[i][0], .count = ranges[i][1] };
    memcpy (model + ranges[i][0], src + ranges[i][0], ranges[i][1]);
    pthread_create (&t[i], NULL, write_one, &w[i]);
  }
  while (waiting (a) < n)
    nanosleep (&(struct timespec) { 0, 1000000 }, NULL);
  stripe_unlock (&a->locks, 0, 0);
  for (i = 0; i < n; i++) {
    pthread_join (t[i], NULL);
    failed |= w[i].failed;
  }
  if (failed)
    fprintf (stderr, "FAIL: %s: a held-stripe write failed\n", name);
  else if (a->gather.runs - runs != want_runs ||
           a->gather.taken - taken != want_taken) {
    fprintf (stderr, "FAIL: %s: %" PRIu64 " runs of %" PRIu64 " writes "
             "gathered, expected %" PRIu64 " of %" PRIu64 "\n", name,
             a->gather.runs - runs, a->gather.taken - taken, want_runs,
             want_taken);
    failed = 1;
  }
  return failed;
}

/* The array reads back as the model, and a check finds no mismatch. */
static int
verify (const char *name, struct raid_array *a, const uint8_t *model,
        uint64_t size)
{
  uint8_t *back = malloc (size);
  char err[256];
  int failed = 1;

  if (raid_flush (a) || raid_read (a, back, size, 0))
    fprintf (stderr, "FAIL: %s: reading back failed\n", name);
  else if (memcmp (back, model, size) != 0)
    fprintf (stderr, "FAIL: %s: contents differ from the model\n", name);
  else if (raid_job_check (a, false, err, sizeof err) == -1)
    fprintf (stderr, "FAIL: %s: check: %s\n", name, err);
  else {
    while (raid_job_step (a, 1 << 20) == 1 && a->job.kind != RAID_JOB_NONE)
      ;
    if (a->last_mismatches)
      fprintf (stderr, "FAIL: %s: check found %" PRIu64 " mismatched "
               "sectors\n", name, a->last_mismatches);
    else
      failed = 0;
  }
  free (back);
  return failed;
}

static int
run_case (const char *dir, const char *name, const char *array_keys,
          unsigned members)
{
  char conf[512], err[1024], path[512];
  struct raid_create_options co = { .assume_clean = true };
  struct raid_options ao = { 0 };
  struct raid_config cfg;
  struct raid_array *a;
  struct writer w[WRITERS];
  pthread_t t[WRITERS];
  uint8_t *model, *src;
  uint64_t size, C, S, i;
  unsigned seed = members, m;
  FILE *fp;
  int failed = 0;

  snprintf (conf, sizeof conf, "%s/%s.conf", dir, name);
  fp = fopen (conf, "w");
  fprintf (fp, "[array]\n%sbitmap = none\n[members]\n", array_keys);
  for (m = 0; m < members; m++) {
    snprintf (path, sizeof path, "%s/%s-%u.img", dir, name, m);
    fclose (fopen (path, "w"));
    if (truncate (path, 4 * 1024 * 1024) == -1)
      return 1;
    fprintf (fp, "member = %s\n", path);
  }
  fclose (fp);
  if (raid_config_load (conf, &cfg, err, sizeof err) == -1 ||
      raid_create (&cfg, &co, err, sizeof err) == -1 ||
      !(a = raid_assemble (&cfg, &ao, err, sizeof err))) {
    fprintf (stderr, "FAIL: %s: %s\n", name, err);
    return 1;
  }
  if (raid_start (a) == -1) {
    failed = 1;
    goto out;
  }
  size = raid_size (a);
  C = a->geo.chunk_bytes;
  S = C * a->geo.data_members;
  model = calloc (1, size);     /* new members read as zeros */
  src = malloc (size);
  for (i = 0; i < size; i++)
    src[i] = (uint8_t) rand_r (&seed);
  {
    /* A whole stripe in three pieces, as one run. */
    const uint64_t whole[][2] = { { 0, C }, { C, S - 2 * C }, { S - C, C } };
    /* Pieces that split chunk 0, and one that joins nothing. */
    const uint64_t split[][2] = {
      { 1000, 8000 }, { 9000, C }, { 9000 + C, 700 }, { S - 4096, 4096 },
    };
    failed |= held_stripe (name, a, src, model, whole, 3, 1, 3);
    for (i = 0; i < size; i++)
      src[i] = (uint8_t) rand_r (&seed);
    failed |= held_stripe (name, a, src, model, split, 4, 1, 3);
    failed |= verify (name, a, model, size);
  }
  /* Pieces of 5000 bytes: they split chunks and now and then cross
   * into the next stripe (written on their own). */
  for (i = 0; i < size; i++)
    model[i] = src[i] = (uint8_t) rand_r (&seed);
  for (m = 0; m < WRITERS; m++) {
    w[m] = (struct writer) { .a = a, .src = src, .size = size,
      .piece = 5000, .index = m };
    pthread_create (&t[m], NULL, write_interleaved, &w[m]);
  }
  for (m = 0; m < WRITERS; m++) {
    pthread_join (t[m], NULL);
    failed |= w[m].failed;
  }
  failed |= verify (name, a, model, size);
  if (!failed)
    printf ("ok: %s: held-stripe runs gathered; %" PRIu64 " runs of %"
            PRIu64 " writes in all; contents and parity right\n", name,
            a->gather.runs, a->gather.taken);
  free (model);
  free (src);
 out:
  raid_close (a);
  raid_config_free (&cfg);
  return failed;
}

int
main (void)
{
  char dir[] = "/tmp/nbdraid-test-gather.XXXXXX";
  char cmd[600];
  int failed = 0;

  if (!mkdtemp (dir)) {
    perror ("mkdtemp");
    return 1;
  }
  failed |= run_case (dir, "raid5", "level = 5\nchunk = 16K\n", 4);
  failed |= run_case (dir, "raid6", "level = 6\nlayout = ra\n"
                      "chunk = 64K\n", 6);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "warning: could not remove %s\n", dir);
  return failed;
}
