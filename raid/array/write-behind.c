/* nbdraid: md's write-behind: the queue of writes to the write-mostly
 * copies and the workers that land them (write-behind.h says how). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

void
behind_init (struct raid_array *a, unsigned max)
{
  struct raid_behind *b = &a->behind;

  pthread_mutex_init (&b->lock, NULL);
  pthread_cond_init (&b->landed, NULL);
  pthread_cond_init (&b->runnable, NULL);
  b->next_seq = 1;
  /* Without a bitmap to hold the lagging regions, a crash would leave
   * the far copy behind unnoticed: the copies are written together. */
  if (max && !a->bitmap.present) {
    array_log (a, RAID_LOG_WARNING, "array %s: no usable bitmap: "
               "write-behind is off, the write-mostly copies are written "
               "with the others", a->name);
    max = 0;
  }
  b->max = max;
}

bool
behind_on (const struct raid_array *a)
{
  return a->behind.running;
}

/* Do [a, a+alen) and [b, b+blen) share a byte? */
static bool
overlap (uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
  return a < b + blen && b < a + alen;
}

/* The oldest behind-write no worker has taken whose earlier overlapping
 * ones have all landed, or NULL.  With the lock held. */
static struct behind_write *
next_runnable (struct raid_behind *b)
{
  struct behind_write *w;

  for (w = b->head; w; w = w->next)
    if (!w->running && w->blockers == 0)
      return w;
  return NULL;
}

/* Write w to the write-mostly copies; a copy whose write fails is
 * failed (its regions stay dirty: the array is degraded).  Then give
 * back the hold on its regions. */
static void
land (struct raid_array *a, struct behind_write *w)
{
  unsigned ticket = retired_enter (&a->retired);

  array_run (a, &w->batch);
  array_settle_writes (a, &w->batch);
  retired_exit (&a->retired, ticket);
  array_end_write (a, w->first, w->last);
}

/* w has landed: out of the queue, and the later ones it held back one
 * blocker fewer.  With the lock held. */
static void
unlink_landed (struct raid_behind *b, struct behind_write *w)
{
  struct behind_write *later;

  for (later = w->next; later; later = later->next)
    if (overlap (w->off, w->len, later->off, later->len))
      later->blockers--;
  if (w->prev)
    w->prev->next = w->next;
  else
    b->head = w->next;
  if (w->next)
    w->next->prev = w->prev;
  else
    b->tail = w->prev;
  b->outstanding -= w->slots;
}

static void *
worker (void *arg)
{
  struct raid_array *a = arg;
  struct raid_behind *b = &a->behind;
  struct behind_write *w;

  pthread_mutex_lock (&b->lock);
  for (;;) {
    w = next_runnable (b);
    if (!w) {
      if (b->stopping && !b->head)
        break;
      pthread_cond_wait (&b->runnable, &b->lock);
      continue;
    }
    w->running = true;
    pthread_mutex_unlock (&b->lock);
    land (a, w);
    pthread_mutex_lock (&b->lock);
    unlink_landed (b, w);
    pthread_cond_broadcast (&b->landed);
    pthread_cond_broadcast (&b->runnable);
    behind_discard (w);
  }
  pthread_mutex_unlock (&b->lock);
  return NULL;
}

int
behind_start (struct raid_array *a)
{
  struct raid_behind *b = &a->behind;
  unsigned i, n = b->max < BEHIND_WORKERS ? b->max : BEHIND_WORKERS;
  int err;

  for (i = 0; i < n; i++) {
    err = pthread_create (&b->workers[i], NULL, worker, a);
    if (err) {
      behind_stop (a);
      errno = err;
      return -1;
    }
    b->nworkers++;
  }
  b->running = n > 0;
  return 0;
}

void
behind_stop (struct raid_array *a)
{
  struct raid_behind *b = &a->behind;
  unsigned i;

  if (!b->nworkers)
    return;
  pthread_mutex_lock (&b->lock);
  b->stopping = true;
  pthread_cond_broadcast (&b->runnable);
  pthread_mutex_unlock (&b->lock);
  for (i = 0; i < b->nworkers; i++)
    pthread_join (b->workers[i], NULL);
  b->nworkers = 0;
  b->running = false;
}

void
behind_free (struct raid_array *a)
{
  struct raid_behind *b = &a->behind;

  if (!b->next_seq)
    return;                     /* never set up */
  pthread_mutex_destroy (&b->lock);
  pthread_cond_destroy (&b->landed);
  pthread_cond_destroy (&b->runnable);
}

struct behind_write *
behind_prepare (struct raid_array *a, const void *buf, uint64_t off,
                uint64_t len)
{
  struct behind_write *w = calloc (1, sizeof *w);

  if (!w)
    return NULL;
  io_batch_init (&w->batch);
  w->off = off;
  w->len = len;
  w->slots = (len + BEHIND_SLOT_BYTES - 1) / BEHIND_SLOT_BYTES;
  /* One bigger than the whole limit still goes, alone. */
  if (w->slots > a->behind.max)
    w->slots = a->behind.max;
  w->first = a->ops->sync_unit_of (a, off);
  w->last = a->ops->sync_unit_of (a, off + len - 1);
  if (buf) {
    /* Aligned, for members opened with O_DIRECT. */
    if (posix_memalign ((void **) &w->data, 4096, len) != 0) {
      free (w);
      errno = ENOMEM;
      return NULL;
    }
    memcpy (w->data, buf, len);
  }
  return w;
}

void *
behind_data (struct behind_write *w, uint64_t done)
{
  return w->data ? w->data + done : NULL;
}

void
behind_discard (struct behind_write *w)
{
  if (!w)
    return;
  io_batch_free (&w->batch);
  free (w->data);
  free (w);
}

uint64_t
behind_queue (struct raid_array *a, struct behind_write *w)
{
  struct raid_behind *b = &a->behind;
  struct behind_write *earlier;
  uint64_t seq;

  if (w->batch.n == 0) {
    behind_discard (w);
    return 0;
  }
  /* The client write's array_start_write made the regions dirty on
   * disk; this hold keeps them so until w lands. */
  array_hold_write (a, w->first, w->last);
  pthread_mutex_lock (&b->lock);
  while (b->outstanding + w->slots > b->max)
    pthread_cond_wait (&b->landed, &b->lock);
  for (earlier = b->head; earlier; earlier = earlier->next)
    if (overlap (earlier->off, earlier->len, w->off, w->len))
      w->blockers++;
  seq = w->seq = b->next_seq++;
  w->prev = b->tail;
  if (b->tail)
    b->tail->next = w;
  else
    b->head = w;
  b->tail = w;
  b->outstanding += w->slots;
  if (w->blockers == 0)
    pthread_cond_signal (&b->runnable);
  pthread_mutex_unlock (&b->lock);
  return seq;
}

void
behind_wait_upto (struct raid_array *a, uint64_t seq)
{
  struct raid_behind *b = &a->behind;

  if (!b->running)
    return;
  pthread_mutex_lock (&b->lock);
  while (b->head && b->head->seq <= seq)
    pthread_cond_wait (&b->landed, &b->lock);
  pthread_mutex_unlock (&b->lock);
}

void
behind_drain (struct raid_array *a)
{
  struct raid_behind *b = &a->behind;
  uint64_t seq;

  if (!b->running)
    return;
  pthread_mutex_lock (&b->lock);
  seq = b->next_seq - 1;
  pthread_mutex_unlock (&b->lock);
  behind_wait_upto (a, seq);
}

/* Is a behind-write overlapping [off, off+len) outstanding?  With the
 * lock held. */
static bool
range_behind (const struct raid_behind *b, uint64_t off, uint64_t len)
{
  const struct behind_write *w;

  for (w = b->head; w; w = w->next)
    if (overlap (w->off, w->len, off, len))
      return true;
  return false;
}

bool
behind_pending (struct raid_array *a, uint64_t off, uint64_t len)
{
  struct raid_behind *b = &a->behind;
  bool pending;

  if (!b->running)
    return false;
  pthread_mutex_lock (&b->lock);
  pending = range_behind (b, off, len);
  pthread_mutex_unlock (&b->lock);
  return pending;
}

void
behind_wait_range (struct raid_array *a, uint64_t off, uint64_t len)
{
  struct raid_behind *b = &a->behind;

  if (!b->running)
    return;
  pthread_mutex_lock (&b->lock);
  while (range_behind (b, off, len))
    pthread_cond_wait (&b->landed, &b->lock);
  pthread_mutex_unlock (&b->lock);
}

void
behind_status (struct raid_array *a, unsigned *limit, unsigned *writes,
               unsigned *slots)
{
  struct raid_behind *b = &a->behind;
  const struct behind_write *w;

  *limit = *writes = *slots = 0;
  if (!b->running)
    return;
  *limit = b->max;
  pthread_mutex_lock (&b->lock);
  for (w = b->head; w; w = w->next)
    ++*writes;
  *slots = b->outstanding;
  pthread_mutex_unlock (&b->lock);
}
