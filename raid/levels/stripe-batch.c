/* nbdraid: group commit of writes to one parity stripe. */
#include <config.h>

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "stripe-batch.h"

/* Bounds of how long an update of a stream waits for its stripe (see
 * hold_for_stripe).  An update on members that move tens of MB/s takes
 * tens of milliseconds, and more with others queued on its members:
 * the upper bound only stops a member that hung from holding writes
 * for good. */
#define HOLD_MIN_NS 1000000
#define HOLD_MAX_NS 500000000

/* A queued write waits, leads its stripe's update, or was carried by
 * a write that completed the stripe (and waits for that to be done). */
enum waiter_state { WAITING, LEADING, CARRIED, DONE };

/* A write queued on a busy stripe; lives on its caller's stack. */
struct waiter {
  struct stripe_piece piece;
  uint64_t stripe;
  struct waiter *next;
  enum waiter_state state;
  bool first; /* the stripe's first: it may wait for it */
  int result, err;
  pthread_cond_t cond;
};

struct batch_stripe {
  uint64_t stripe;
  struct waiter *head, *tail;   /* queued, oldest first */
  uint64_t bytes;               /* of the writes queued */
  bool updating;                /* an update of it runs */
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
  b->update_ns = 0;
  b->running_bytes = 0;
  b->last_done_ns = 0;
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

/* When the wait of a hold that began at start ends, given what runs
 * now.  The rest of a stream's stripe comes when the client hears that
 * earlier writes are done: while updates run, the hold waits for them
 * (up to twice an update's recent time: other writers' updates may
 * run on and on); once none does, for the stripe's time at 1 GB/s
 * (one byte a nanosecond) after the last one ended, at least
 * hold_min_ns, for the client to hear and send.  A wait as long as an
 * update's time alone ran out as the update before ended, just before
 * the rest came: on 16 members of 40 MB/s, RAID6 at 1M chunks wrote a
 * third of its stripes in two read-modify-writes.  Lock held. */
static uint64_t
hold_until (const struct stripe_batches *b, uint64_t stripe_bytes,
            uint64_t start)
{
  const uint64_t turnaround
      = stripe_bytes > b->hold_min_ns ? stripe_bytes : b->hold_min_ns;
  const uint64_t since = b->last_done_ns > start ? b->last_done_ns : start;
  uint64_t until = b->running_bytes ? start + 2 * b->update_ns + turnaround
                                    : since + turnaround;

  return until < start + b->hold_max_ns ? until : start + b->hold_max_ns;
}

/* The update st's head leads waits, with the lock held, for the rest
 * of its stripe if a stream is writing it: two writes in a row near
 * each other, and a stripe's worth in flight, so that the rest can
 * come (a client with less in flight could not send it while this
 * waits); until hold_until.  Waiting costs no more than the reads a
 * partial stripe would.  Writes queueing behind wake it once the
 * stripe is covered, a write that completes it by carrying the queue,
 * any write once the stream has gone past it, and the end of the last
 * update running (the deadline moves). */
static void
hold_for_stripe (struct stripe_batches *b, struct batch_stripe *st,
                 uint64_t stripe_bytes, struct waiter *me)
{
  const uint64_t start = now_ns ();
  uint64_t until;
  struct timespec ts;
  bool out = false;

  if (b->streak < 2 || b->active_bytes < stripe_bytes ||
      !rest_to_come (st, stripe_bytes))
    return;
  st->holding = true;
  b->held++;
  while (me->state == LEADING && rest_to_come (st, stripe_bytes)) {
    until = hold_until (b, stripe_bytes, start);
    if (now_ns () >= until) {
      out = true;
      break;
    }
    ts.tv_sec = (time_t)(until / 1000000000);
    ts.tv_nsec = (long)(until % 1000000000);
    pthread_cond_timedwait (&me->cond, &b->lock, &ts);
  }
  /* Carried: st is the carrier's now, and may be gone. */
  if (me->state != LEADING)
    return;
  b->held_out += out;
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

/* Queue me (piece, in stripe `stripe`) on its stripe, making it busy
 * with me leading if nobody updates it.  Lock held.  Returns 0, or -1
 * with errno set. */
static int
join (struct stripe_batches *b, uint64_t stripe, uint64_t stripe_bytes,
      const struct stripe_piece *piece, struct waiter *me)
{
  struct batch_stripe *st = find_busy (b, stripe);

  *me = (struct waiter){ .piece = *piece, .stripe = stripe, .state = WAITING };
  if (!st) {
    st = calloc (1, sizeof *st);
    if (!st) {
      errno = ENOMEM;
      return -1;
    }
    st->stripe = stripe;
    st->next = b->busy;
    b->busy = st;
    me->state = LEADING;
    me->first = true;
  }
  if (st->tail)
    st->tail->next = me;
  else
    st->head = me;
  st->tail = me;
  st->bytes += piece->count;
  b->queued++;
  pthread_cond_init (&me->cond, &b->monotonic);
  if (st->holding && st->bytes >= stripe_bytes)
    pthread_cond_signal (&st->head->cond);
  return 0;
}

/* An update of bytes, that took took_ns, ended: add its time to the
 * moving average over the last eight or so, and wake the holds once
 * none runs (their deadline moves).  Lock held. */
static void
update_ended (struct stripe_batches *b, uint64_t bytes, uint64_t took_ns)
{
  struct batch_stripe *st;

  b->update_ns
      = b->update_ns ? b->update_ns - b->update_ns / 8 + took_ns / 8 : took_ns;
  b->running_bytes -= bytes;
  b->last_done_ns = now_ns ();
  if (b->running_bytes == 0)
    for (st = b->busy; st; st = st->next)
      if (st->holding)
        pthread_cond_signal (&st->head->cond);
}

/* An update of st is done, with result r (errno err): tell the writes
 * it carried, batch[0..n-1], and hand the stripe to the oldest write
 * queued meanwhile, if any.  Lock held. */
static void
updated (struct stripe_batches *b, struct batch_stripe *st,
         struct waiter **batch, unsigned n, int r, int err)
{
  unsigned i;

  st->updating = false;
  for (i = 0; i < n; i++) {
    batch[i]->result = r;
    batch[i]->err = err;
    batch[i]->state = DONE;
    pthread_cond_signal (&batch[i]->cond);
  }
  if (st->head) { /* queued meanwhile: the oldest leads */
    st->head->state = LEADING;
    pthread_cond_signal (&st->head->cond);
  }
  else
    forget_busy (b, st);
}

/* Wait until an update carried me, or lead one: for a stripe's first
 * write, after waiting for the rest of it.  Lock held, and dropped
 * while the update runs.  Returns the update's result, errno set on
 * -1. */
static int
finish (struct stripe_batches *b, uint64_t stripe_bytes, struct waiter *me,
        stripe_batch_fn fn, void *opaque)
{
  struct waiter *batch[STRIPE_BATCH_PIECES];
  struct stripe_piece pieces[STRIPE_BATCH_PIECES];
  struct batch_stripe *st;
  uint64_t start, bytes = 0;
  unsigned n, i;
  int r, err;

wait:
  while (me->state == WAITING || me->state == CARRIED)
    pthread_cond_wait (&me->cond, &b->lock);
  if (me->state == DONE) {
    pthread_cond_destroy (&me->cond);
    errno = me->err;
    return me->result;
  }

  /* Leading: the queue's head is this write.  Only a stripe's first
   * write waits for the rest: one that queued behind an update takes
   * what came meanwhile (the rest may have gone with that update). */
  st = find_busy (b, me->stripe);
  if (me->first)
    hold_for_stripe (b, st, stripe_bytes, me);
  if (me->state != LEADING) /* a write came and completed it */
    goto wait;
  n = take_batch (st, batch);
  assert (n >= 1 && batch[0] == me);
  b->queued -= n;
  b->joined += n - 1;
  for (i = 0; i < n; i++) {
    pieces[i] = batch[i]->piece;
    bytes += pieces[i].count;
  }
  st->bytes -= bytes;
  st->updating = true;
  b->running_bytes += bytes;
  pthread_mutex_unlock (&b->lock);
  start = now_ns ();
  r = fn (opaque, me->stripe, me->stripe, pieces, n);
  err = errno;

  pthread_mutex_lock (&b->lock);
  update_ended (b, bytes, now_ns () - start);
  updated (b, st, batch + 1, n - 1, r, err);
  pthread_cond_destroy (&me->cond);
  errno = err;
  return r;
}

/* Does piece write all of stripe `stripe`? */
static bool
whole (const struct stripe_piece *piece, uint64_t stripe, uint64_t stripe_bytes)
{
  return piece->offset <= stripe * stripe_bytes
         && piece->offset + piece->count >= (stripe + 1) * stripe_bytes;
}

/* The part of piece in stripe `stripe`. */
static struct stripe_piece
part (const struct stripe_piece *piece, uint64_t stripe, uint64_t stripe_bytes)
{
  uint64_t lo = stripe * stripe_bytes, hi = lo + stripe_bytes;
  uint64_t from = piece->offset > lo ? piece->offset : lo;
  uint64_t to
      = piece->offset + piece->count < hi ? piece->offset + piece->count : hi;

  return (struct stripe_piece){ piece->buf ? piece->buf + (from - piece->offset)
                                           : NULL,
                                from, to - from };
}

/* Would piece, a write's part of busy stripe st, complete it: no
 * update of it runs, and the writes queued on it and piece cover it
 * whole, none overlapping another, in one update's worth of pieces?
 * Lock held. */
static bool
completes (const struct batch_stripe *st, const struct stripe_piece *piece,
           uint64_t stripe_bytes)
{
  const struct waiter *w, *v;
  unsigned n = 1;

  if (st->updating || st->bytes + piece->count != stripe_bytes)
    return false;
  for (w = st->head; w; w = w->next) {
    if (++n > STRIPE_BATCH_PIECES || overlaps (&w->piece, piece))
      return false;
    for (v = st->head; v != w; v = v->next)
      if (overlaps (&v->piece, &w->piece))
        return false;
  }
  return true;
}

/* Take every write queued on st into the caller's update, waking its
 * leader (held for the rest, or not there yet) to wait for that.
 * Returns how many, in carried[].  Lock held. */
static unsigned
carry (struct stripe_batches *b, struct batch_stripe *st,
       struct waiter **carried)
{
  struct waiter *w;
  unsigned n = 0;

  for (w = st->head; w; w = w->next) {
    carried[n++] = w;
    w->state = CARRIED;
    st->bytes -= w->piece.count;
    pthread_cond_signal (&w->cond);
  }
  st->head = st->tail = NULL;
  st->holding = false;
  st->updating = true;
  b->queued -= n;
  b->joined += n;
  return n;
}

/* Note the stream and queue the parts in a single hold of the lock: a
 * held update the write wakes (it went past the stripe) finds the
 * write's part of it queued already.  A first part that completes its
 * stripe takes the writes queued there into the write's own update of
 * the whole stripes after it (their member I/O then joins up on each
 * member, io-gather.h), instead of queueing.  The parts are finished
 * in stripe order, the whole stripes between written on the way: a
 * write waits only on stripes below the ones it leads or carries, so
 * the writes in flight cannot wait on each other in a circle. */
int
stripe_batch_write (struct stripe_batches *b, uint64_t stripe_bytes,
                    const struct stripe_piece *piece, stripe_batch_fn fn,
                    void *opaque)
{
  uint64_t first = piece->offset / stripe_bytes;
  uint64_t last = (piece->offset + piece->count - 1) / stripe_bytes;
  struct waiter head, tail, *carried[STRIPE_BATCH_PIECES];
  struct stripe_piece pieces[STRIPE_BATCH_PIECES];
  struct batch_stripe *st = NULL;
  unsigned ncarried = 0, i;
  uint64_t start, mid_bytes;
  bool queue_head = !whole (piece, first, stripe_bytes);
  bool queue_tail = last > first && !whole (piece, last, stripe_bytes);
  struct stripe_piece p, mid;
  uint64_t mid_first, mid_last;
  int r = 0, err = 0, fr, ferr;

  pthread_mutex_lock (&b->lock);
  b->active_bytes += piece->count;
  note_stream (b, stripe_bytes, piece);
  if (queue_head) {
    p = part (piece, first, stripe_bytes);
    st = find_busy (b, first);
    if (st && completes (st, &p, stripe_bytes)) {
      ncarried = carry (b, st, carried);
      queue_head = false;
    }
    else if (join (b, first, stripe_bytes, &p, &head) == -1)
      queue_head = false, r = -1, err = errno;
  }
  if (queue_tail) {
    p = part (piece, last, stripe_bytes);
    if (join (b, last, stripe_bytes, &p, &tail) == -1)
      queue_tail = false, r = -1, err = errno;
  }
  if (queue_head && finish (b, stripe_bytes, &head, fn, opaque) == -1)
    r = -1, err = errno;

  /* The whole stripes between: one call, their member I/O together. */
  mid_first = first + queue_head;
  mid_last = last - queue_tail;
  if (mid_first <= mid_last) {
    mid = part (piece, mid_first, stripe_bytes);
    mid.count = part (piece, mid_last, stripe_bytes).offset
                + part (piece, mid_last, stripe_bytes).count - mid.offset;
    mid_bytes = mid.count;
    for (i = 0; i < ncarried; i++) {
      pieces[i] = carried[i]->piece;
      mid_bytes += pieces[i].count;
    }
    pieces[ncarried] = mid;
    b->running_bytes += mid_bytes;
    pthread_mutex_unlock (&b->lock);
    start = now_ns ();
    fr = fn (opaque, mid_first, mid_last, pieces, ncarried + 1);
    ferr = errno;
    if (fr == -1)
      r = -1, err = ferr;
    pthread_mutex_lock (&b->lock);
    update_ended (b, mid_bytes, now_ns () - start);
    if (ncarried)
      updated (b, st, carried, ncarried, fr, ferr);
  }

  if (queue_tail && finish (b, stripe_bytes, &tail, fn, opaque) == -1)
    r = -1, err = errno;
  b->active_bytes -= piece->count;
  pthread_mutex_unlock (&b->lock);
  errno = err;
  return r;
}
