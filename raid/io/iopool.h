/* nbdraid: run a set of member I/O operations in parallel.
 *
 * The calling thread works on its own set too, so a single operation
 * costs no hand-off, and a pool that has not been started (or has no
 * threads) simply runs everything in the caller.
 */
#ifndef NBDRAID_IOPOOL_H
#define NBDRAID_IOPOOL_H

#include <stdbool.h>
#include <stddef.h>

struct io_op;
struct iopool;

typedef void (*iopool_exec_fn) (void *ctx, struct io_op *op);

struct iopool *iopool_new (unsigned threads);
/* Start the worker threads (after nbdkit forks).  Returns 0 or -1
 * with errno set. */
int iopool_start (struct iopool *p);
void iopool_free (struct iopool *p);

/* Execute every op with exec(ctx, op), in parallel, and return when all
 * are done. */
void iopool_run (struct iopool *p, struct io_op *ops, size_t n,
                 iopool_exec_fn exec, void *ctx);

/* Is the calling thread running an op of a set iopool_run shares out
 * (one of a job's pieces, a nested array's request)?  Its siblings run
 * beside it on the other threads. */
bool iopool_nested (void);

#endif
