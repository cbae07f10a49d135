/* nbdraid: stripe locks.
 *
 * Writers hold a run of stripes exclusively while they update data and
 * parity, so concurrent writers to one stripe never interleave their
 * read-modify-write and no reader sees a stripe half updated.  Stripes
 * hash onto a fixed table of reader-writer locks; a request takes the
 * locks of its stripes in ascending table order, so requests never
 * deadlock.
 */
#ifndef NBDRAID_STRIPE_LOCK_H
#define NBDRAID_STRIPE_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STRIPE_LOCKS 1024

struct stripe_locks {
  pthread_rwlock_t lock[STRIPE_LOCKS];
};

void stripe_locks_init (struct stripe_locks *l);
void stripe_locks_destroy (struct stripe_locks *l);

/* Lock (and unlock) stripes first..last inclusive. */
void stripe_lock (struct stripe_locks *l, uint64_t first, uint64_t last,
                  bool exclusive);
void stripe_unlock (struct stripe_locks *l, uint64_t first, uint64_t last);

/* Lock an arbitrary set of keys (exclusively), in table order.  Keys
 * that share a table slot are taken once.  slots must have room for n;
 * it is rewritten to the slots actually held, and *nslots set. */
void stripe_lock_keys (struct stripe_locks *l, const uint64_t *keys,
                       size_t n, unsigned *slots, size_t *nslots);
void stripe_unlock_slots (struct stripe_locks *l, const unsigned *slots,
                          size_t nslots);

#endif
