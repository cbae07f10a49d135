/* nbdraid: byte-range locks for writers that must not overlap. */
#include <config.h>

#include <stdbool.h>

#include "range-lock.h"

void
range_lock_init (struct range_lock *l)
{
  pthread_mutex_init (&l->lock, NULL);
  pthread_cond_init (&l->freed, NULL);
  l->held = NULL;
}

void
range_lock_destroy (struct range_lock *l)
{
  pthread_cond_destroy (&l->freed);
  pthread_mutex_destroy (&l->lock);
}

static bool
overlaps_held (const struct range_lock *l, uint64_t off, uint64_t end)
{
  const struct range_held *h;

  for (h = l->held; h; h = h->next)
    if (h->off < end && off < h->end)
      return true;
  return false;
}

void
range_lock (struct range_lock *l, struct range_held *h, uint64_t off,
            uint64_t len)
{
  h->off = off;
  h->end = off + len;
  pthread_mutex_lock (&l->lock);
  while (overlaps_held (l, h->off, h->end))
    pthread_cond_wait (&l->freed, &l->lock);
  h->next = l->held;
  l->held = h;
  pthread_mutex_unlock (&l->lock);
}

void
range_unlock (struct range_lock *l, struct range_held *h)
{
  struct range_held **p;

  pthread_mutex_lock (&l->lock);
  for (p = &l->held; *p != h; p = &(*p)->next)
    ;
  *p = h->next;
  pthread_cond_broadcast (&l->freed);
  pthread_mutex_unlock (&l->lock);
}
