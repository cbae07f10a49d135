/* nbdraid: group commit of writes to one parity stripe. */
#include <config.h>

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "stripe-batch.h"

/* Bounds of how long an update of a stream waits for its stripe: the
 * time the stripe takes to arrive at 1 GB/s (one byte a nanosecond). */
#define HOLD_MIN_NS 1000000
#define HOLD_MAX_NS 20000000

enum waiter_state { WAITING, LEADING, DONE };

/* A write queued on a busy stripe; lives on its caller's stack. */
struct waiter {
  struct stripe_piece piece;
  struct waiter *next;
  enum waiter_state state;
  int result, err;
  pthread_cond_t cond;
};

struct batch_stripe {
  uint64_t stripe;
  struct waiter *head, *tail;   /* queued, oldest first */
  uint64_t bytes;               /* of the writes queued */
  bool holding;                 /* the head waits for the stripe to fill */
  bool left;                    /* the stream has left it meanwhile */
  struct batch_stripe *next;
};

/* No stripe busy and no stream seen; holds time out on the monotonic clock. */
void
stripe_batches_init (struct stripe_batches *b)
{
  pthread_mutex_init (&b->lock, NULL);
  pthread_condattr_init (&b->monotonic);
  pthread_condattr_setclock (&b->monotonic, CLOCK_MONOTONIC);
  b->busy = NULL;
  b->queued = b->streak = 0;
  b->active_bytes = 0;
  b->next_offset = 0;
  b->hold_min_ns = HOLD_MIN_NS;
  b->hold_max_ns = HOLD_MAX_NS;
  b->joined = b->held = b->held_out = b->released = 0;
}

/* Destroy the gathering: no write may be in stripe_batch_write. */
void
stripe_batches_destroy (struct stripe_batches *b)
{
  assert (b->busy == NULL);
  pthread_condattr_destroy (&b->monotonic);
  pthread_mutex_destroy (&b->lock);
}

/* Whether piece takes the stream out of stripe st: across its end,
 * bringing the rest of the stripe by itself, or into the stripe after
 * next, past the rest.  A write of the next stripe alone does not:
 * threads bring a stripe's last piece after the next one's first at
 * times. */
static bool
leaves (const struct stripe_piece *piece, const struct batch_stripe *st,
        uint64_t stripe_bytes)
{
  const uint64_t end = (st->stripe + 1) * stripe_bytes;
  const uint64_t piece_end = piece->offset + piece->count;

  return piece_end > end &&
    (piece->offset < end || piece_end > end + stripe_bytes);
}

/* Whether the update held for stripe st still has something to wait
 * for: the stripe is not covered, and the stream has not left it. */
static bool
rest_to_come (const struct batch_stripe *st, uint64_t stripe_bytes)
{
  return st->bytes < stripe_bytes && !st->left;
}

/* Note where piece lies against the write before it: a stream's writes
 * start near where the last one ended (threads reorder them a little).
 * Wake the updates held for stripes the stream has left. */
static void
note_stream (struct stripe_batches *b, uint64_t stripe_bytes,
             const struct stripe_piece *piece)
{
  uint64_t from = b->next_offset > stripe_bytes
    ? b->next_offset - stripe_bytes : 0;
  struct batch_stripe *st;

  b->streak = piece->offset >= from &&
    piece->offset < b->next_offset + stripe_bytes ? b->streak + 1 : 0;
  b->next_offset = piece->offset + piece->count;
  for (st = b->busy; st; st = st->next)
    if (st->holding && !st->left && leaves (piece, st, stripe_bytes)) {
      st->left = true;
      b->released++;
      pthread_cond_signal (&st->head->cond);
    }
}

/* The update st's head leads waits, with the lock held, for the rest
 * of its stripe if a stream is writing it: two writes in a row near
 * each other, and a stripe's worth in flight, so that the rest can
 * come (a client with less in flight could not send it while this
 * waits); for as long as the stripe takes to arrive at 1 GB/s.  Writes
 * queueing behind wake it once the stripe is covered, and any write
 * once the stream has gone past it. */
static void
hold_for_stripe (struct stripe_batches *b, struct batch_stripe *st,
                 uint64_t stripe_bytes, pthread_cond_t *cond)
{
  const uint64_t hold_ns = stripe_bytes < b->hold_min_ns ? b->hold_min_ns
    : stripe_bytes > b->hold_max_ns ? b->hold_max_ns : stripe_bytes;
  struct timespec until;
  int r = 0;

  if (b->streak < 2 || b->active_bytes < stripe_bytes ||
      !rest_to_come (st, stripe_bytes))
    return;
  clock_gettime (CLOCK_MONOTONIC, &until);
  until.tv_nsec += (long) hold_ns;
  until.tv_sec += until.tv_nsec / 1000000000;
  until.tv_nsec %= 1000000000;
  st->holding = true;
  b->held++;
  while (rest_to_come (st, stripe_bytes) && r != ETIMEDOUT)
    r = pthread_cond_timedwait (cond, &b->lock, &until);
  b->held_out += r == ETIMEDOUT;
  st->holding = false;
}

/* The busy stripe `stripe`, or NULL if no update runs on it.  Lock held. */
static struct batch_stripe *
find_busy (struct stripe_batches *b, uint64_t stripe)
{
  struct batch_stripe *st;

  for (st = b->busy; st; st = st->next)
    if (st->stripe == stripe)
      return st;
  return NULL;
}

/* Take st, its queue empty, off the busy list and free it.  Lock held. */
static void
forget_busy (struct stripe_batches *b, struct batch_stripe *st)
{
  struct batch_stripe **p;

  for (p = &b->busy; *p != st; p = &(*p)->next)
    ;
  *p = st->next;
  free (st);
}

/* Do pieces x and y share a byte? */
static bool
overlaps (const struct stripe_piece *x, const struct stripe_piece *y)
{
  return x->offset < y->offset + y->count && y->offset < x->offset + x->count;
}

/* Take the writes at the head of the queue, oldest first, up to the
 * first that overlaps one taken: NBD lets concurrent writes land in
 * either order, but one update must not hold two versions of a byte. */
static unsigned
take_batch (struct batch_stripe *st, struct waiter **batch)
{
  unsigned n = 0, i;

  while (st->head && n < STRIPE_BATCH_PIECES) {
    for (i = 0; i < n; i++)
      if (overlaps (&st->head->piece, &batch[i]->piece))
        goto out;
    batch[n++] = st->head;
    st->head = st->head->next;
  }
 out:
  if (!st->head)
    st->tail = NULL;
  return n;
}

int
stripe_batch_write (struct stripe_batches *b, uint64_t stripe,
                    uint64_t stripe_bytes, const struct stripe_piece *piece,
                    stripe_batch_fn fn, void *opaque)
{
  struct waiter me = { .piece = *piece, .state = WAITING };
  struct waiter *batch[STRIPE_BATCH_PIECES];
  struct stripe_piece pieces[STRIPE_BATCH_PIECES];
  struct batch_stripe *st;
  bool first;
  unsigned n, i;
  int r, err;

  pthread_mutex_lock (&b->lock);
  st = find_busy (b, stripe);
  if (!st) {
    st = calloc (1, sizeof *st);
    if (!st) {
      pthread_mutex_unlock (&b->lock);
      errno = ENOMEM;
      return -1;
    }
    st->stripe = stripe;
    st->next = b->busy;
    b->busy = st;
    me.state = LEADING;
  }
  first = me.state == LEADING;
  b->active_bytes += piece->count;
  note_stream (b, stripe_bytes, piece);
  if (st->tail)
    st->tail->next = &me;
  else
    st->head = &me;
  st->tail = &me;
  st->bytes += piece->count;
  b->queued++;
  pthread_cond_init (&me.cond, &b->monotonic);
  if (st->holding && st->bytes >= stripe_bytes)
    pthread_cond_signal (&st->head->cond);
  while (me.state == WAITING)
    pthread_cond_wait (&me.cond, &b->lock);
  if (me.state == DONE) {
    b->active_bytes -= piece->count;
    pthread_mutex_unlock (&b->lock);
    pthread_cond_destroy (&me.cond);
    errno = me.err;
    return me.result;
  }

  /* Leading: the queue's head is this write.  Only a stripe's first
   * write waits for the rest: one that queued behind an update takes
   * what came meanwhile (the rest may have gone with that update). */
  if (first)
    hold_for_stripe (b, st, stripe_bytes, &me.cond);
  n = take_batch (st, batch);
  assert (n >= 1 && batch[0] == &me);
  b->queued -= n;
  b->joined += n - 1;
  for (i = 0; i < n; i++) {
    pieces[i] = batch[i]->piece;
    st->bytes -= pieces[i].count;
  }
  pthread_mutex_unlock (&b->lock);
  r = fn (opaque, stripe, pieces, n);
  err = errno;

  pthread_mutex_lock (&b->lock);
  for (i = 1; i < n; i++) {
    batch[i]->result = r;
    batch[i]->err = err;
    batch[i]->state = DONE;
    pthread_cond_signal (&batch[i]->cond);
  }
  if (st->head) {               /* queued meanwhile: the oldest leads */
    st->head->state = LEADING;
    pthread_cond_signal (&st->head->cond);
  }
  else
    forget_busy (b, st);
  b->active_bytes -= piece->count;
  pthread_mutex_unlock (&b->lock);
  pthread_cond_destroy (&me.cond);
  errno = err;
  return r;
}

void
stripe_batch_passing (struct stripe_batches *b, uint64_t stripe_bytes,
                      const struct stripe_piece *piece)
{
  pthread_mutex_lock (&b->lock);
  note_stream (b, stripe_bytes, piece);
  pthread_mutex_unlock (&b->lock);
}
