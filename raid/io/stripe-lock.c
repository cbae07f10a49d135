/* nbdraid: stripe locks over a hashed table of rwlocks. */
#include <config.h>

#include <stdlib.h>

#include "stripe-lock.h"

/* Initialise the table's locks, writers preferred. */
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

/* Destroy the table's locks; none may be held. */
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

/* qsort order for slot numbers: ascending. */
static int
compare_slots (const void *x, const void *y)
{
  unsigned a = *(const unsigned *) x, b = *(const unsigned *) y;
  return a < b ? -1 : a > b;
}

void
stripe_lock_keys (struct stripe_locks *l, const uint64_t *keys, size_t n,
                  unsigned *slots, size_t *nslots)
{
  size_t i, m = 0;

  for (i = 0; i < n; i++)
    slots[i] = keys[i] % STRIPE_LOCKS;
  qsort (slots, n, sizeof *slots, compare_slots);
  for (i = 0; i < n; i++)
    if (m == 0 || slots[m - 1] != slots[i])
      slots[m++] = slots[i];
  for (i = 0; i < m; i++)
    pthread_rwlock_wrlock (&l->lock[slots[i]]);
  *nslots = m;
}

/* Unlock the slots stripe_lock_keys took, as it returned them. */
void
stripe_unlock_slots (struct stripe_locks *l, const unsigned *slots,
                     size_t nslots)
{
  size_t i;

  for (i = 0; i < nslots; i++)
    pthread_rwlock_unlock (&l->lock[slots[i]]);
}
