/* nbdraid: the workers of a background job: a window's pieces taken in
 * turn by a few threads per core, so that while one waits for its reads
 * or its write another computes.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "job.h"

/* Free the workers' buffers; the next rebuild allocates them again. */
void
job_buffers_free (struct job_buffers *b)
{
  unsigned i;

  for (i = 0; i < JOB_WORKERS_MAX; i++) {
    scratch_free (&b->out[i]);
    scratch_free (&b->level[i]);
  }
}

/* A worker: take pieces of the window until none is left; a failed one
 * leaves its error in the worker's op and stops the rest. */
static void
take_pieces (void *opaque, struct io_op *op)
{
  struct pieces *p = opaque;
  unsigned i = (unsigned) (op - p->first);
  uint64_t off;

  while ((off = __atomic_fetch_add (&p->next, p->each, __ATOMIC_RELAXED))
         < p->len)
    if (p->do_piece (p, p->pos + off,
                     p->each < p->len - off ? p->each : p->len - off,
                     i) == -1) {
      op->err = errno ? errno : EIO;
      /* The window has failed: leave the others no piece to start. */
      __atomic_store_n (&p->next, p->len, __ATOMIC_RELAXED);
      break;
    }
}

/* Workers for pieces of each bytes of a member: several per core, so
 * that while one waits for its reads or its write (a disk, the network,
 * the target file's lock), another computes; within the memory bound. */
size_t
worker_count (const struct raid_array *a, uint64_t each, uint64_t len)
{
  size_t n = 4 * array_cpus ();
  uint64_t fit = WORKERS_BYTES / ((a->geo.members + 1) * each);

  if (n > JOB_WORKERS_MAX)
    n = JOB_WORKERS_MAX;
  if (n > fit)
    n = fit ? fit : 1;
  if (n > (len + each - 1) / each)
    n = (len + each - 1) / each;
  return n;
}

/* Run p's pieces on n workers: a single thread would leave every other
 * core idle while it waits for reads, computes and writes.  0, or -1
 * with errno set. */
int
run_pieces (struct pieces *p, size_t n)
{
  struct io_op ops[JOB_WORKERS_MAX];
  size_t i;
  int r = 0;

  p->first = ops;
  for (i = 0; i < n; i++)       /* a worker's op carries only its error */
    ops[i] = (struct io_op) { .err = 0 };
  iopool_run (p->a->pool, ops, n, take_pieces, p);
  for (i = 0; i < n; i++)
    if (ops[i].err) {
      errno = ops[i].err;
      r = -1;
    }
  return r;
}
