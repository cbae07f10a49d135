/* nbdraid: writes gathered on a busy parity stripe (stripe-batch.h).
 *
 * First the queue alone: while one update is held, the others queue,
 * and the next update must carry them all, oldest first, except that
 * it stops before a write overlapping one it carries.
 *
 * A stream's update of a stripe waits for the rest of it: with another
 * stripe's worth in flight, the first quarter of a stripe waits and the
 * other three ride with it (a write of the next stripe coming first
 * does not end the wait), or a write across into the next stripe ends
 * the wait; a write promoted to lead a queue does not wait; a
 * writer with one write in flight at a time never waits.
 *
 * Then the engine: eight threads write disjoint pieces of the same stripes at
 * once (a barrier before each stripe makes them collide), with random lengths
 * that share 4K pages and sometimes zeros, half the time a stripe's
 * worth that straddles two stripes, against a model in memory.
 * The array must read back as the model healthy, then with members
 * failed (so parity written by gathered updates is what reconstructs
 * the data), and gathered writes after a member failed must read back
 * too.  Rounds repeat (up to 20) until some write was gathered: on a
 * loaded machine the threads may run one after another.
 */
#include <config.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stripe-column.h"
#include "test-array.h"
#include "test-report.h"

#define THREADS 8
#define STRIPES_PER_ROUND 48
/* The queue alone: its stripe, 8 writes of 4K would not fill it. */
#define STRIPE_BYTES (1024 * 1024)

/* ---- the queue alone ---- */

struct queue_check {
  struct stripe_batches b;
  pthread_mutex_t lock;
  unsigned calls, sizes[THREADS];
  uint64_t first_offset[THREADS];
  unsigned pieces;              /* what queue_write writes */
  bool release;                 /* the first update may finish */
};

struct queue_writer {
  struct queue_check *q;
  struct stripe_piece piece;
  int r;
};

/* The first update is held until check_queue releases it. */
static int
hold_first (void *opaque, uint64_t first, uint64_t last,
            const struct stripe_piece *p, unsigned n)
{
  struct queue_check *q = opaque;
  bool held = true;
  unsigned call;

  pthread_mutex_lock (&q->lock);
  call = q->calls++;
  q->sizes[call] = n;
  q->first_offset[call] = p[0].offset;
  pthread_mutex_unlock (&q->lock);
  (void)first;
  (void)last;
  while (call == 0 && held) {
    usleep (1000);
    pthread_mutex_lock (&q->lock);
    held = !q->release;
    pthread_mutex_unlock (&q->lock);
  }
  return 0;
}

static void *
queue_write (void *arg)
{
  struct queue_writer *w = arg;

  w->r = stripe_batch_write (&w->q->b, STRIPE_BYTES, &w->piece, hold_first,
                             w->q);
  return NULL;
}

static bool
started (struct queue_check *q)
{
  bool r;

  pthread_mutex_lock (&q->lock);
  r = q->calls > 0;
  pthread_mutex_unlock (&q->lock);
  return r;
}

/* pieces writes of 4K at 4K * i; with overlap, write 5 covers write 3
 * too.  Write 0 starts first and is held until the rest have queued
 * behind it, one after another. */
static int
check_queue (bool overlap, unsigned want_calls, const unsigned *want_sizes)
{
  struct queue_check q = { .pieces = 6 };
  struct queue_writer w[6];
  pthread_t t[6];
  unsigned i, queued = 0;
  int r = 0;

  stripe_batches_init (&q.b);
  pthread_mutex_init (&q.lock, NULL);
  for (i = 0; i < q.pieces; i++) {
    w[i] = (struct queue_writer) { .q = &q, .piece = { NULL, 4096 * i, 4096 } };
    if (overlap && i == 5)
      w[i].piece = (struct stripe_piece) { NULL, 4096 * 3, 3 * 4096 };
    pthread_create (&t[i], NULL, queue_write, &w[i]);
    /* In order: each queues before the next starts. */
    while (i > 0 && queued < i) {
      usleep (1000);
      pthread_mutex_lock (&q.b.lock);
      queued = q.b.queued;
      pthread_mutex_unlock (&q.b.lock);
    }
    while (i == 0 && !started (&q))
      usleep (1000);
  }
  pthread_mutex_lock (&q.lock);
  q.release = true;
  pthread_mutex_unlock (&q.lock);
  for (i = 0; i < q.pieces; i++) {
    pthread_join (t[i], NULL);
    r |= w[i].r;
  }
  if (r || q.calls != want_calls)
    r = 1;
  for (i = 0; i < want_calls && !r; i++)
    r = q.sizes[i] != want_sizes[i];
  if (!r && (q.first_offset[0] != 0 || q.first_offset[1] != 4096))
    r = 1;
  if (r) {
    char sizes[16 * THREADS] = "";
    size_t len = 0;

    for (i = 0; i < q.calls && i < THREADS; i++)
      len += (size_t) snprintf (sizes + len, sizeof sizes - len, " %u",
                                q.sizes[i]);
    fail ("queue%s: %u updates of%s writes", overlap ? " (overlap)" : "",
          q.calls, sizes);
  }
  else
    printf ("ok: queue%s: %u updates\n", overlap ? " (overlap)" : "",
            q.calls);
  pthread_mutex_destroy (&q.lock);
  stripe_batches_destroy (&q.b);
  return r;
}

/* ---- a stream's update waits for its stripe ---- */

/* A stripe of 32 MiB: threads started one after another reach the
 * queue well within its time at 1 GB/s (34 ms). */
#define STREAM_STRIPE (32ULL << 20)

struct stream_check {
  pthread_mutex_t lock;
  unsigned slow4_ms;            /* how long an update of stripe 4 takes */
  bool release;                 /* the update of stripe 5 may finish */
  bool block6, release6;        /* the first update of stripe 6 lasts too */
  unsigned calls6, size6;       /* updates of stripe 6, the last's size */
};

struct stream_writer {
  struct stripe_batches *b;
  struct stream_check *c;
  uint64_t stripe;
  struct stripe_piece piece;
  bool go;                      /* set (atomically) to start writing */
  int r;
};

/* Stripe 5's update stands for one in flight elsewhere: it lasts until
 * released.  Stripe 6's are counted, and with block6 the first lasts
 * until released too. */
static int
stream_update (void *opaque, uint64_t stripe, uint64_t last,
               const struct stripe_piece *p, unsigned n)
{
  struct stream_check *c = opaque;
  bool held;

  (void)last;
  if (stripe == 4)
    usleep (c->slow4_ms * 1000);
  pthread_mutex_lock (&c->lock);
  if (stripe == 6) {
    c->calls6++;
    c->size6 = n;
  }
  held = stripe == 5 || (stripe == 6 && c->block6 && c->calls6 == 1);
  pthread_mutex_unlock (&c->lock);
  while (held) {
    usleep (1000);
    pthread_mutex_lock (&c->lock);
    held = !(stripe == 5 ? c->release : c->release6);
    pthread_mutex_unlock (&c->lock);
  }
  (void) p;
  return 0;
}

static void *
stream_write (void *arg)
{
  struct stream_writer *w = arg;

  while (!__atomic_load_n (&w->go, __ATOMIC_ACQUIRE))
    usleep (100);
  w->r = stripe_batch_write (w->b, STREAM_STRIPE, &w->piece, stream_update,
                             w->c);
  return NULL;
}

static uint64_t
counter (struct stripe_batches *b, const uint64_t *field)
{
  uint64_t v;

  pthread_mutex_lock (&b->lock);
  v = *field;
  pthread_mutex_unlock (&b->lock);
  return v;
}

static unsigned
queued (struct stripe_batches *b)
{
  unsigned n;

  pthread_mutex_lock (&b->lock);
  n = b->queued;
  pthread_mutex_unlock (&b->lock);
  return n;
}

static struct stream_writer
stream_writer (struct stripe_batches *b, struct stream_check *c,
               uint64_t stripe, uint64_t offset, uint64_t count)
{
  return (struct stream_writer) { .b = b, .c = c, .stripe = stripe,
    .piece = { NULL, offset, count }, .go = true };
}

/* Join stripe 6's writers t[1..n), then let stripe 5's update (t[0])
 * finish and join it: the end of every stream round.  The writers'
 * results, or-ed. */
static int
finish_stream (struct stream_check *c, pthread_t *t,
               struct stream_writer *w, unsigned n)
{
  int r = 0;
  unsigned i;

  for (i = 1; i < n; i++) {
    pthread_join (t[i], NULL);
    r |= w[i].r;
  }
  pthread_mutex_lock (&c->lock);
  c->release = true;
  pthread_mutex_unlock (&c->lock);
  pthread_join (t[0], NULL);
  return r | w[0].r;
}

/* How the rest of stripe 6 comes while its first quarter waits. */
enum rest { REST_QUEUES, REST_OVERTAKEN, REST_PASSES };

/* A stream's update in these checks may wait a minute: what ends the
 * wait is what is checked, never the clock, so a slow machine (or
 * valgrind) cannot change the outcome. */
#define STREAM_HOLD_NS (60ULL * 1000000000)

/* Poll cond (up to 20 s: a test that hangs fails instead). */
#define POLL_FOR(cond) \
  do { \
    unsigned polls_; \
    for (polls_ = 0; !(cond) && polls_ < 200000; polls_++) \
      usleep (100); \
  } while (0)

/* A stream under way: b's holds last at least hold_min_ns (at most
 * STREAM_HOLD_NS), stripe 4 written (*first), and stripe 5's whole
 * write (*w5, thread *t5) in flight until c->release. */
static void
start_stream (struct stripe_batches *b, struct stream_check *c,
              uint64_t hold_min_ns, struct stream_writer *first,
              struct stream_writer *w5, pthread_t *t5)
{
  const uint64_t S = STREAM_STRIPE;

  stripe_batches_init (b);
  b->hold_min_ns = hold_min_ns;
  b->hold_max_ns = STREAM_HOLD_NS;
  pthread_mutex_init (&c->lock, NULL);
  *first = stream_writer (b, c, 4, 4 * S, S);
  stream_write (first);
  *w5 = stream_writer (b, c, 5, 5 * S, S);
  pthread_create (t5, NULL, stream_write, w5);
  POLL_FOR (counter (b, &b->active_bytes) >= S);
}

/* Stripe 4 written, stripe 5 being written (a whole stripe in flight),
 * then the first quarter of stripe 6 arrives: a stream, so its update
 * waits.  With REST_QUEUES the other three quarters, arriving
 * meanwhile, ride with it: one update of four writes, though the last
 * quarter comes first (it ends at the stripe's end: the stream has not
 * left the stripe).  REST_OVERTAKEN is the same, but a whole write
 * of stripe 7 passes before the middle quarters come (threads reorder
 * a stream): that is not the stream leaving stripe 6, and the wait goes
 * on.  With REST_PASSES a write from stripe 6 through the whole of 7
 * brings the rest: that ends the wait, and its part of stripe 6 rides
 * with the first quarter (stripe 7 it writes itself). */
static void
stream_round (enum rest rest)
{
  static const char *what[] = {
    [REST_QUEUES] = "the rest queued and rode with it",
    [REST_OVERTAKEN] = "the rest rode with it, though a write of the "
                       "next stripe came first",
    [REST_PASSES] = "a write across the next stripe brought the rest",
  };
  const uint64_t S = STREAM_STRIPE, Q = S / 4;
  const unsigned writers = rest == REST_PASSES ? 2 : 5;
  const unsigned want_size6 = rest == REST_PASSES ? 2 : 4;
  const uint64_t released = rest == REST_PASSES;
  struct stream_check c = { .release = false };
  struct stripe_batches b;
  struct stream_writer first, w[5];
  unsigned i, before = failures;
  pthread_t t[5];
  int r = 0;

  start_stream (&b, &c, STREAM_HOLD_NS, &first, &w[0], &t[0]);
  for (i = 1; i < writers; i++) {
    w[i] = stream_writer (&b, &c, 6, 6 * S + (i - 1) * Q, Q);
    w[i].go = false;
    pthread_create (&t[i], NULL, stream_write, &w[i]);
  }
  __atomic_store_n (&w[1].go, true, __ATOMIC_RELEASE);
  POLL_FOR (counter (&b, &b.held) == 1);
  if (rest != REST_PASSES) {
    __atomic_store_n (&w[writers - 1].go, true, __ATOMIC_RELEASE);
    POLL_FOR (queued (&b) == 2);
  }
  /* Whether a passing write ends the wait is decided in the call, under
   * the gathering's lock: the count says so as soon as it returns. */
  if (rest == REST_OVERTAKEN)
    r = stripe_batch_write (&b, S, &(struct stripe_piece){ NULL, 7 * S, S },
                            stream_update, &c);
  if (rest == REST_PASSES)
    r = stripe_batch_write (
        &b, S, &(struct stripe_piece){ NULL, 6 * S + Q, 2 * S - Q },
        stream_update, &c);
  if (counter (&b, &b.released) != released)
    fail ("stream (%s): the passing write ended %" PRIu64 " waits, want "
          "%" PRIu64, what[rest], counter (&b, &b.released), released);
  for (i = 2; i < writers - 1; i++)
    __atomic_store_n (&w[i].go, true, __ATOMIC_RELEASE);
  r |= finish_stream (&c, t, w, writers) | first.r;
  if (r || b.held != 1 || b.held_out != 0 || c.calls6 != 1
      || c.size6 != want_size6)
    fail ("stream (%s): %" PRIu64 " updates waited, %" PRIu64 " ran out, "
          "stripe 6 in %u updates, the last of %u writes, want 1, 0, 1, "
          "%u (%d)",
          what[rest], b.held, b.held_out, c.calls6, c.size6, want_size6, r);
  else if (failures == before)
    printf ("ok: a stream's update waited for its stripe: %s\n",
            what[rest]);
  pthread_mutex_destroy (&c.lock);
  stripe_batches_destroy (&b);
}

/* The rest of a stream's stripe comes when the client hears that the
 * writes before it are done: stripe 6's first quarter waits while
 * stripe 5's update runs, longer than updates took before (stripe 4's,
 * 2 s), and the rest, sent once stripe 5 is done, rides with it.  A
 * wait of an update's time from its start ran out at 2 s, while stripe
 * 5 was still being written (2.5 s); this one may last 6 s while it
 * is, and 2 s after: wide margins for a loaded machine or valgrind. */
static void
check_hold_through_update (void)
{
  const uint64_t S = STREAM_STRIPE, Q = S / 4;
  struct stream_check c = { .slow4_ms = 2000 };
  struct stripe_batches b;
  struct stream_writer first, w[5];
  pthread_t t[5];
  unsigned i;
  int r;

  start_stream (&b, &c, 2000000000, &first, &w[0], &t[0]);
  for (i = 1; i < 5; i++) {
    w[i] = stream_writer (&b, &c, 6, 6 * S + (i - 1) * Q, Q);
    w[i].go = i == 1;
    pthread_create (&t[i], NULL, stream_write, &w[i]);
  }
  POLL_FOR (counter (&b, &b.held) == 1);
  usleep (2500000);
  pthread_mutex_lock (&c.lock);
  c.release = true;
  pthread_mutex_unlock (&c.lock);
  pthread_join (t[0], NULL);
  for (i = 2; i < 5; i++)
    __atomic_store_n (&w[i].go, true, __ATOMIC_RELEASE);
  r = w[0].r | first.r;
  for (i = 1; i < 5; i++) {
    pthread_join (t[i], NULL);
    r |= w[i].r;
  }
  if (r || b.held != 1 || b.held_out != 0 || c.calls6 != 1 || c.size6 != 4)
    fail ("hold through an update: %" PRIu64 " updates waited, %" PRIu64
          " ran out, stripe 6 in %u updates, the last of %u writes, want "
          "1, 0, 1, 4 (%d)",
          b.held, b.held_out, c.calls6, c.size6, r);
  else
    printf ("ok: a stream's update waited while the update before ran\n");
  pthread_mutex_destroy (&c.lock);
  stripe_batches_destroy (&b);
}

/* A writer with one write in flight at a time never waits, however
 * sequential. */
static void
check_lone_stream (void)
{
  struct stream_check c = { .release = true };
  struct stripe_batches b;
  struct stream_writer w;
  unsigned i;

  stripe_batches_init (&b);
  pthread_mutex_init (&c.lock, NULL);
  for (i = 0; i < 16; i++) {
    w = stream_writer (&b, &c, 6 + i / 4, (24 + i) * (STREAM_STRIPE / 4),
                       STREAM_STRIPE / 4);
    stream_write (&w);
  }
  if (b.held != 0)
    fail ("lone stream: %" PRIu64 " updates waited", b.held);
  else
    printf ("ok: a lone sequential writer never waits\n");
  pthread_mutex_destroy (&c.lock);
  stripe_batches_destroy (&b);
}

/* Stripe 6's first write leads at once (no stream yet) and its update
 * lasts until released; the next two quarters queue behind it, with
 * stripe 5's whole write in flight.  The one promoted to lead them
 * takes them at once: waiting is for a stripe's first write, and the
 * rest of this stripe went with the update before. */
static void
check_promoted (void)
{
  const uint64_t S = STREAM_STRIPE, Q = S / 4;
  struct stream_check c = { .block6 = true };
  struct stripe_batches b;
  struct stream_writer w[4];
  pthread_t t[4];
  unsigned i;
  int r;

  stripe_batches_init (&b);
  pthread_mutex_init (&c.lock, NULL);
  w[0] = stream_writer (&b, &c, 5, 5 * S, S);
  pthread_create (&t[0], NULL, stream_write, &w[0]);
  while (counter (&b, &b.active_bytes) < S)
    usleep (1000);
  for (i = 1; i < 4; i++) {
    w[i] = stream_writer (&b, &c, 6, 6 * S + (i - 1) * Q, Q);
    pthread_create (&t[i], NULL, stream_write, &w[i]);
    while (i == 1 && counter (&b, &b.active_bytes) < S + Q)
      usleep (1000);
  }
  while (queued (&b) != 2)      /* until the two have queued */
    usleep (1000);
  pthread_mutex_lock (&c.lock);
  c.release6 = true;
  pthread_mutex_unlock (&c.lock);
  r = finish_stream (&c, t, w, 4);
  if (r || b.held != 0 || c.calls6 != 2 || c.size6 != 2)
    fail ("promoted: %" PRIu64 " updates waited, stripe 6 in %u updates, "
          "the last of %u writes (%d)", b.held, c.calls6, c.size6, r);
  else
    printf ("ok: a write promoted to lead takes the queue without waiting\n");
  pthread_mutex_destroy (&c.lock);
  stripe_batches_destroy (&b);
}

/* ---- the engine ---- */

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
    uint64_t stripe = (uint64_t)rand_r (&seed) % (rd->nstripes - 1);
    /* Half the time the stripe's worth starts mid-stripe: the writes
     * across the boundary queue a part on each side. */
    uint64_t shift = rand_r (&seed) % 2 ? rd->stripe_bytes / 2 : 0;
    uint64_t off, len;
    bool zero = rand_r (&seed) % 5 == 0 && w->t % 2;
    int r;

    cuts (rd->stripe_bytes, &seed, cut);
    off = stripe * rd->stripe_bytes + shift + cut[w->t];
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
      fail ("write at %" PRIu64 "+%" PRIu64, off, len);
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

#define MIB2 (2 * 1024 * 1024ULL)

static int
matches (const char *name, const char *when, struct round *rd, uint64_t size)
{
  uint8_t *back = malloc (size);
  int r = 0;

  if (raid_read (rd->a, back, size, 0) == -1) {
    fail ("%s: reading back %s failed", name, when);
    r = 1;
  }
  else if (memcmp (back, rd->model, size) != 0) {
    fail ("%s: contents differ %s", name, when);
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
    fail ("%s: failing member %u: %s", name, m, err);
    return 1;
  }
  return 0;
}

/* Gathered writes healthy, then with member `first_lost` failed; reads
 * healthy and with one and then (RAID6) two members failed. */
static int
run_case (const char *dir, const char *name, const char *array_keys,
          unsigned members, uint64_t member_bytes, unsigned parity)
{
  struct raid_config cfg;
  char err[1024];
  struct raid_array *a;
  struct round rd = { 0 };
  struct raid_shape shape;
  unsigned seed;
  uint64_t size;
  int r = 1;

  a = test_array (dir, name, array_keys, members, member_bytes, NULL, &cfg,
                  err, sizeof err);
  if (!a) {
    fail ("%s: %s", name, err);
    return 1;
  }
  if (raid_start (a) == -1)
    goto out;
  size = raid_size (a);
  rd.a = a;
  rd.model = calloc (1, size);
  raid_get_shape (a, &shape);
  rd.stripe_bytes = shape.stripe_bytes;
  rd.nstripes = size / rd.stripe_bytes;
  for (seed = 1; seed <= 20 && parity_state (a)->batches.joined == 0 &&
       !rd.failed; seed++)
    run_round (&rd, seed);
  if (rd.failed || matches (name, "healthy", &rd, size) ||
      fail_member (name, a, 1) || matches (name, "one failed", &rd, size) ||
      run_round (&rd, seed) ||
      matches (name, "after degraded writes", &rd, size) ||
      (parity == 2 && (fail_member (name, a, 3) ||
                       matches (name, "two failed", &rd, size))))
    goto free;
  if (parity_state (a)->batches.joined == 0) {
    fail ("%s: no write was gathered", name);
    goto free;
  }
  printf ("ok: %s, %" PRIu64 " writes gathered\n", name,
          parity_state (a)->batches.joined);
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
  static const unsigned all[] = { 1, 5 }, split[] = { 1, 4, 1 };
  int failed = 0;

  failed |= check_queue (false, 2, all);
  failed |= check_queue (true, 3, split);
  stream_round (REST_QUEUES);
  stream_round (REST_OVERTAKEN);
  stream_round (REST_PASSES);
  check_promoted ();
  check_hold_through_update ();
  check_lone_stream ();
  if (!mkdtemp (dir)) {
    perror ("mkdtemp");
    return 1;
  }
  failed |= run_case (dir, "raid5", "level = 5\nchunk = 16K\n", 4, MIB2, 1);
  /* Gathered pieces write chunks apart: logged one run at a time. */
  failed |= run_case (dir, "raid5-ppl", "level = 5\nchunk = 16K\n"
                      "consistency-policy = ppl\n", 4, 3 * MIB2 / 2, 1);
  failed |= run_case (dir, "raid6", "level = 6\nchunk = 4K\n", 6, MIB2, 2);
  failed |= run_case (dir, "raid6-la", "level = 6\nlayout = la\n"
                      "chunk = 8K\n", 7, MIB2, 2);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "warning: could not remove %s\n", dir);
  return failed || failures;
}
