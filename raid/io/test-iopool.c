/* nbdraid: the worker pool (iopool.h).
 *
 * Every op of a set runs exactly once, sets shared out from inside an
 * op run too, and iopool_nested tells an op of a shared set (which
 * array_run keeps in the caller) from a thread on its own: a lone op,
 * a pool not started, the caller before and after.
 */
#include <config.h>

#include <stdio.h>

#include "io-batch.h"
#include "iopool.h"
#include "test-report.h"

#define OPS 64
#define INNER 4

struct run {
  struct iopool *pool;
  unsigned runs[OPS], inner_runs[OPS][INNER];
  bool nested[OPS], inner_nested[OPS][INNER];
};

static void
inner_op (void *ctx, struct io_op *op)
{
  struct run *r = ctx;

  __atomic_add_fetch (&r->inner_runs[op->member][op->off], 1,
                      __ATOMIC_RELAXED);
  r->inner_nested[op->member][op->off] = iopool_nested ();
}

/* Every fourth op shares out a set of its own, as a job's piece does. */
static void
outer_op (void *ctx, struct io_op *op)
{
  struct run *r = ctx;
  struct io_op inner[INNER];
  unsigned i;

  __atomic_add_fetch (&r->runs[op->member], 1, __ATOMIC_RELAXED);
  r->nested[op->member] = iopool_nested ();
  if (op->member % 4)
    return;
  for (i = 0; i < INNER; i++)
    inner[i] = (struct io_op) { .member = op->member, .off = i };
  iopool_run (r->pool, inner, INNER, inner_op, r);
  if (iopool_nested () != r->nested[op->member])
    fail ("op %u: nested %d after its own set, %d before", op->member,
          iopool_nested (), r->nested[op->member]);
}

/* n ops on pool, shared out (or run in the caller); a pool started
 * shares out the inner sets. */
static void
run_set (struct iopool *pool, bool started, size_t n, bool shared,
         const char *what)
{
  struct run r = { .pool = pool };
  struct io_op ops[OPS];
  unsigned i, j;

  for (i = 0; i < n; i++)
    ops[i] = (struct io_op) { .member = i };
  iopool_run (pool, ops, n, outer_op, &r);
  if (iopool_nested ())
    fail ("%s: the caller is nested after the set", what);
  for (i = 0; i < n; i++) {
    if (r.runs[i] != 1)
      fail ("%s: op %u ran %u times", what, i, r.runs[i]);
    if (r.nested[i] != shared)
      fail ("%s: op %u: nested %d, not %d", what, i, r.nested[i], shared);
    for (j = 0; i % 4 == 0 && j < INNER; j++) {
      if (r.inner_runs[i][j] != 1)
        fail ("%s: op %u's op %u ran %u times", what, i, j,
              r.inner_runs[i][j]);
      if (r.inner_nested[i][j] != started)
        fail ("%s: op %u's op %u: nested %d, not %d", what, i, j,
              r.inner_nested[i][j], started);
    }
  }
}

int
main (void)
{
  struct iopool *idle = iopool_new (3), *pool = iopool_new (3);

  if (!idle || !pool || iopool_start (pool) == -1) {
    perror ("iopool");
    return 1;
  }
  if (iopool_nested ())
    fail ("nested before any set");
  run_set (idle, false, OPS, false, "pool not started");
  run_set (pool, true, 1, false, "a lone op");
  run_set (pool, true, OPS, true, "shared set");
  iopool_free (idle);
  iopool_free (pool);
  printf ("%s\n", failures ? "FAILED" : "ok");
  return failures != 0;
}
