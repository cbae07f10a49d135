/* nbdraid: writes to one parity stripe, gathered while it is busy.
 *
 * A write inside one stripe that leaves part of it unwritten costs a
 * read-modify-write: it reads and writes its data, P and Q, several
 * times its size through the kernel.
 * Concurrent writes to one stripe would queue on its stripe lock
 * anyway; here they queue in front of it instead, and when the write
 * updating the stripe is done, the first one queued updates it for
 * every write queued at once (group commit).  A sequential stream at
 * queue depth then mostly covers whole stripes, which read nothing.
 * A write across stripes queues its parts in the stripes it leaves
 * partly unwritten, and writes the whole stripes between itself: a
 * stream whose writes do not line up with its stripes (RAID5's five
 * data chunks and 1M writes) covers each stripe with the parts of two
 * or three writes.  The write whose first part completes a stripe
 * others queued on does not queue: it takes their parts into its own
 * update of the stripes after it, so that on each member the stripe's
 * I/O joins theirs (io-gather.h) instead of costing a request of its
 * own.
 * A write to a stripe nobody is updating starts at once, unless it is
 * part of a sequential stream with a stripe's worth of writes in
 * flight: then the rest of its stripe is on its way, and the update
 * waits for it (as md holds a stripe that needs reads while the queue
 * is plugged).  The rest comes as the client hears of writes done: so
 * it waits while other updates run (up to twice an update's recent
 * time), then for the stripe's time at 1 GB/s after the last one
 * ended, or until the stream has gone past the stripe.  A writer at
 * queue depth 1, or random writes, never wait.
 */
#ifndef NBDRAID_STRIPE_BATCH_H
#define NBDRAID_STRIPE_BATCH_H

#include <pthread.h>
#include <stdint.h>

/* Most writes one update of a stripe takes. */
#define STRIPE_BATCH_PIECES 32

/* One client write: buf NULL writes zeros. */
struct stripe_piece {
  const uint8_t *buf;
  uint64_t offset, count;
};

struct batch_stripe;

struct stripe_batches {
  pthread_mutex_t lock;
  pthread_condattr_t monotonic;
  struct batch_stripe *busy;    /* stripes being updated */
  unsigned queued;              /* writes waiting for an update */
  uint64_t active_bytes;        /* of the writes in stripe_batch_write */
  uint64_t next_offset;         /* where the latest write ended */
  unsigned streak;              /* writes in a row near where the last ended */
  uint64_t update_ns;           /* an update's time, moving average */
  uint64_t running_bytes;       /* of the writes whose update runs */
  uint64_t last_done_ns;        /* when an update last ended (now_ns) */
  /* Bounds of a stream's wait for its stripe: hold_min_ns the least
   * time it waits once no update runs, hold_max_ns the most in all. */
  uint64_t hold_min_ns, hold_max_ns;
  uint64_t joined;              /* writes carried by another's update */
  uint64_t held;                /* updates that waited for their stripe */
  uint64_t held_out;            /* of which waited as long as allowed */
  uint64_t released;            /* of which the stream, leaving, woke */
};

/* Update stripes first..last with pieces[0..n-1], which lie in them:
 * no two overlap.  Returns 0, or -1 with errno set. */
typedef int (*stripe_batch_fn) (void *opaque, uint64_t first, uint64_t last,
                                const struct stripe_piece *pieces, unsigned n);

void stripe_batches_init (struct stripe_batches *b);
void stripe_batches_destroy (struct stripe_batches *b);

/* Write piece through fn: its parts in stripes (of stripe_bytes of
 * data) it leaves partly unwritten alone if the stripe is idle, else
 * with the writes queued beside them; the whole stripes between in one
 * call.  Returns 0, or -1 with errno set if an update carrying any of
 * it failed. */
int stripe_batch_write (struct stripe_batches *b, uint64_t stripe_bytes,
                        const struct stripe_piece *piece, stripe_batch_fn fn,
                        void *opaque);

#endif
