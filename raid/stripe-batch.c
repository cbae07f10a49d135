/* nbdraid: group commit of writes to one parity stripe. */
#include <config.h>

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "stripe-batch.h"

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
  struct batch_stripe *next;
};

void
stripe_batches_init (struct stripe_batches *b)
{
  pthread_mutex_init (&b->lock, NULL);
  b->busy = NULL;
  b->queued = 0;
  b->joined = 0;
}

void
stripe_batches_destroy (struct stripe_batches *b)
{
  assert (b->busy == NULL);
  pthread_mutex_destroy (&b->lock);
}

static struct batch_stripe *
find_busy (struct stripe_batches *b, uint64_t stripe)
{
  struct batch_stripe *st;

  for (st = b->busy; st; st = st->next)
    if (st->stripe == stripe)
      return st;
  return NULL;
}

static void
forget_busy (struct stripe_batches *b, struct batch_stripe *st)
{
  struct batch_stripe **p;

  for (p = &b->busy; *p != st; p = &(*p)->next)
    ;
  *p = st->next;
  free (st);
}

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
                    const struct stripe_piece *piece, stripe_batch_fn fn,
                    void *opaque)
{
  struct waiter me = { .piece = *piece, .state = WAITING };
  struct waiter *batch[STRIPE_BATCH_PIECES];
  struct stripe_piece pieces[STRIPE_BATCH_PIECES];
  struct batch_stripe *st;
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
  if (st->tail)
    st->tail->next = &me;
  else
    st->head = &me;
  st->tail = &me;
  b->queued++;
  pthread_cond_init (&me.cond, NULL);
  while (me.state == WAITING)
    pthread_cond_wait (&me.cond, &b->lock);
  if (me.state == DONE) {
    pthread_mutex_unlock (&b->lock);
    pthread_cond_destroy (&me.cond);
    errno = me.err;
    return me.result;
  }

  /* Leading: the queue's head is this write. */
  n = take_batch (st, batch);
  assert (n >= 1 && batch[0] == &me);
  b->queued -= n;
  b->joined += n - 1;
  pthread_mutex_unlock (&b->lock);
  for (i = 0; i < n; i++)
    pieces[i] = batch[i]->piece;
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
  pthread_mutex_unlock (&b->lock);
  pthread_cond_destroy (&me.cond);
  errno = err;
  return r;
}
