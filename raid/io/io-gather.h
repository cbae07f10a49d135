/* nbdraid: a batch's operations that continue each other on their
 * member, joined into one call through a bounce buffer.
 *
 * A batch's ops on one member often lie end to end on the member but
 * not in memory: a request's chunks a stripe apart in the client's
 * buffer, P of consecutive stripes in separate column buffers.
 * io_batch_add joins only ops adjacent in both.  A member that waits
 * (an NBD export: a round trip; a disk behind it: a fixed cost a
 * request) pays for every call: on members that take 2 ms a request
 * and move 40 MB/s, 64K chunks, each its own request, moved at three
 * quarters of the rate.  Joined, a run is one call over one buffer:
 * writes copied into it before, reads copied out after.  The copies
 * cost little beside such a call; members that copy memory (tmpfs,
 * the page cache) keep their calls, which cost no more than the copies
 * would.
 */
#ifndef NBDRAID_IO_GATHER_H
#define NBDRAID_IO_GATHER_H

#include <stdbool.h>
#include <stddef.h>

#include "io-batch.h"

/* Most bytes one joined call moves. */
#define GATHER_MAX_BYTES (4 * 1024 * 1024)

struct io_gather {
  struct io_op *ops; /* to run, one a run */
  size_t n;
  size_t *first, *last; /* a run's first and last op of the batch */
  size_t *next;         /* an op of the batch: the next in its run */
};

/* Join b's ops into runs: reads or writes of the data area, one after
 * the other among their member's ops, each starting where the run
 * ends, on members joinable(ctx, member) says may be joined.  g->ops
 * are then run instead of b's.  Returns 0, or -1 (ENOMEM) with nothing
 * to free. */
int io_gather_plan (struct io_gather *g, const struct io_batch *b,
                    bool (*joinable) (void *ctx, unsigned member), void *ctx);

/* After g->ops ran: give every op of b its run's result, and a read
 * its bytes; free the plan. */
void io_gather_done (struct io_gather *g, struct io_batch *b);

#endif
