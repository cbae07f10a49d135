/* nbdraid: byte-range locks for writers that must not overlap. */
#include <config.h>

#include <stdbool.h>

#include "range-lock.h"

void
range_lock_init (struct range_lock *l)
{
  pthread_mutex_init (&l->lock, NULL);
  pthread_cond_init (&l->freed, NULL);
  l->queue = NULL;
}

void
range_lock_destroy (struct range_lock *l)
{
  pthread_cond_destroy (&l->freed);
  pthread_mutex_destroy (&l->lock);
}

/* Does a range asked for before h overlap it? */
static bool
overlaps_earlier (const struct range_lock *l, const struct range_held *h)
{
  const struct range_held *e;

  for (e = l->queue; e != h; e = e->next)
    if (e->off < h->end && h->off < e->end)
      return true;
  return false;
}

void
range_lock (struct range_lock *l, struct range_held *h, uint64_t off,
            uint64_t len)
{
  struct range_held **p;

  h->off = off;
  h->end = off + len;
  h->next = NULL;
  pthread_mutex_lock (&l->lock);
  for (p = &l->queue; *p; p = &(*p)->next)
    ;
  *p = h;
  while (overlaps_earlier (l, h))
    pthread_cond_wait (&l->freed, &l->lock);
  pthread_mutex_unlock (&l->lock);
}

void
range_unlock (struct range_lock *l, struct range_held *h)
{
  struct range_held **p;

  pthread_mutex_lock (&l->lock);
  for (p = &l->queue; *p != h; p = &(*p)->next)
    ;
  *p = h->next;
  pthread_cond_broadcast (&l->freed);
  pthread_mutex_unlock (&l->lock);
}
