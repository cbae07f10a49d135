/* nbdraid: writes to one parity stripe, gathered into one.
 *
 * A client writing sequentially in pieces smaller than a stripe (1 MiB
 * writes to a RAID6 of 16 members with 1 MiB chunks: fourteen writes
 * per stripe) would make each write a read-modify-write of its own,
 * one after the other on the stripe's lock.  Instead such a write is
 * registered before it waits for the lock; the writer that holds the
 * lock takes every registered write that joins its own into one
 * contiguous run and writes the run as one request: the whole stripe
 * when the client keeps enough writes in flight.  The writes it took
 * find themselves done when they get the lock in turn.  Only writes
 * already waiting are gathered, so none is delayed for it.
 */
#ifndef NBDRAID_WRITE_GATHER_H
#define NBDRAID_WRITE_GATHER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many writes in one run. */
#define GATHER_MAX 64

struct gathered {
  uint64_t stripe;
  uint64_t offset, count;       /* array bytes */
  const uint8_t *buf;
  bool done;                    /* written by the holder of a run */
  int err;                      /* 0, or the errno the run failed with */
  struct gathered *next;
};

struct write_gather {
  pthread_mutex_t lock;
  struct gathered *waiting;
  uint64_t runs, taken;         /* runs of several writes; writes in them */
};

void gather_init (struct write_gather *g);
void gather_destroy (struct write_gather *g);

/* Register w, before waiting for its stripe's lock. */
void gather_add (struct write_gather *g, struct gathered *w);

/* With w's stripe locked: 0 if another writer has written w already;
 * else the writes of the contiguous run holding w, in order of offset,
 * in run[] (w among them), taken off the waiting list. */
size_t gather_take (struct write_gather *g, struct gathered *w,
                    struct gathered **run);

/* The run is written (err 0) or failed with err. */
void gather_done (struct write_gather *g, struct gathered **run, size_t n,
                  int err);

#endif
