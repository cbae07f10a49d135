/* nbdraid: stripe locks over a hashed table of rwlocks. */
#include <config.h>

#include "stripe-lock.h"

void
stripe_locks_init (struct stripe_locks *l)
{
  pthread_rwlockattr_t attr;
  unsigned i;

  /* Writers must not starve behind a stream of readers. */
  pthread_rwlockattr_init (&attr);
  pthread_rwlockattr_setkind_np (&attr,
                                 PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  for (i = 0; i < STRIPE_LOCKS; i++)
    pthread_rwlock_init (&l->lock[i], &attr);
  pthread_rwlockattr_destroy (&attr);
}

void
stripe_locks_destroy (struct stripe_locks *l)
{
  unsigned i;

  for (i = 0; i < STRIPE_LOCKS; i++)
    pthread_rwlock_destroy (&l->lock[i]);
}

/* The slots of stripes first..last, as up to two ascending ranges. */
static unsigned
slot_ranges (uint64_t first, uint64_t last, unsigned range[2][2])
{
  unsigned a = first % STRIPE_LOCKS, b = last % STRIPE_LOCKS;

  if (last - first >= STRIPE_LOCKS - 1) {
    range[0][0] = 0;
    range[0][1] = STRIPE_LOCKS - 1;
    return 1;
  }
  if (a <= b) {
    range[0][0] = a;
    range[0][1] = b;
    return 1;
  }
  range[0][0] = 0;              /* wrapped: low slots first */
  range[0][1] = b;
  range[1][0] = a;
  range[1][1] = STRIPE_LOCKS - 1;
  return 2;
}

void
stripe_lock (struct stripe_locks *l, uint64_t first, uint64_t last,
             bool exclusive)
{
  unsigned range[2][2], n = slot_ranges (first, last, range), r, i;

  for (r = 0; r < n; r++)
    for (i = range[r][0]; i <= range[r][1]; i++) {
      if (exclusive)
        pthread_rwlock_wrlock (&l->lock[i]);
      else
        pthread_rwlock_rdlock (&l->lock[i]);
    }
}

void
stripe_unlock (struct stripe_locks *l, uint64_t first, uint64_t last)
{
  unsigned range[2][2], n = slot_ranges (first, last, range), r, i;

  for (r = 0; r < n; r++)
    for (i = range[r][0]; i <= range[r][1]; i++)
      pthread_rwlock_unlock (&l->lock[i]);
}
