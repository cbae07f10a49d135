/* nbdraid: run a set of member I/O operations in parallel.
 *
 * The calling thread works on its own set too, so a single operation
 * costs no hand-off, and a pool that has not been started (or has no
 * threads) simply runs everything in the caller.
 */
#ifndef NBDRAID_IOPOOL_H
#define NBDRAID_IOPOOL_H

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

#endif
