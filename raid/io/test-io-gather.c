/* nbdraid: joining a batch's member-contiguous ops (io-gather.h).
 *
 * A batch with ops on three members: on member 0 three writes end to
 * end on the member from three separate buffers, then one that does
 * not continue them; on member 1 two reads end to end and a zero; on
 * member 2, which may not join, two writes end to end.  The plan must
 * run one write of member 0's three with their bytes in order, the
 * fourth alone, one read of member 1's two, member 2's as they were;
 * after a run that fills each read and fails member 2's second
 * write, every op must carry its run's result and each read its own
 * bytes.
 */
#include <config.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "io-gather.h"
#include "test-report.h"

#define K 4096

static bool
not_member_2 (void *ctx, unsigned member)
{
  (void)ctx;
  return member != 2;
}

/* Find the planned op of member at off, or NULL. */
static struct io_op *
planned (struct io_gather *g, unsigned member, uint64_t off)
{
  size_t r;

  for (r = 0; r < g->n; r++)
    if (g->ops[r].member == member && g->ops[r].off == off)
      return &g->ops[r];
  return NULL;
}

int
main (void)
{
  /* Each op's buffer lies below the one before it, so io_batch_add
   * (which joins ops adjacent in memory too) joins none. */
  static uint8_t w[3][K], lone[K], rbuf[4 * K], m2[2][K];
  uint8_t *r0 = rbuf + 3 * K, *r1 = rbuf, want[3 * K];
  struct io_batch b;
  struct io_gather g;
  struct io_op *op;
  unsigned i;

  for (i = 0; i < 3; i++)
    memset (w[i], 'a' + i, K);
  io_batch_init (&b);
  /* Interleaved across members, as a window's segments add them. */
  if (io_batch_add (&b, IO_WRITE, 0, 0, K, w[2])
      || io_batch_add (&b, IO_READ, 1, 8 * K, K, r0)
      || io_batch_add (&b, IO_WRITE, 2, 0, K, m2[1])
      || io_batch_add (&b, IO_WRITE, 0, K, K, w[1])
      || io_batch_add (&b, IO_READ, 1, 9 * K, 2 * K, r1)
      || io_batch_add (&b, IO_WRITE, 2, K, K, m2[0])
      || io_batch_add (&b, IO_WRITE, 0, 2 * K, K, w[0])
      || io_batch_add (&b, IO_ZERO, 1, 11 * K, K, NULL)
      || io_batch_add (&b, IO_WRITE, 0, 7 * K, K, lone))
    fail ("io_batch_add");
  if (b.n != 9)
    fail ("io_batch_add joined ops: %zu, want 9", b.n);
  if (io_gather_plan (&g, &b, not_member_2, NULL) == -1) {
    fail ("io_gather_plan: %m");
    return 1;
  }
  if (g.n != 6)
    fail ("%zu ops planned from %zu, want 6", g.n, b.n);
  op = planned (&g, 0, 0);
  memcpy (want, w[2], K);
  memcpy (want + K, w[1], K);
  memcpy (want + 2 * K, w[0], K);
  if (!op || op->len != 3 * K || memcmp (op->buf, want, 3 * K) != 0)
    fail ("member 0: the three writes are not one, in order");
  if (!(op = planned (&g, 0, 7 * K)) || op->len != K || op->buf != lone)
    fail ("member 0: the write that does not continue was joined");
  if (!(op = planned (&g, 1, 8 * K)) || op->len != 3 * K)
    fail ("member 1: the two reads are not one");
  else
    for (i = 0; i < 3 * K; i++)
      ((uint8_t *)op->buf)[i] = (uint8_t)(i / K + 1);
  if (!(op = planned (&g, 1, 11 * K)) || op->kind != IO_ZERO)
    fail ("member 1: the zero is not alone");
  if (!planned (&g, 2, 0) || !(op = planned (&g, 2, K)))
    fail ("member 2: its writes were joined");
  else
    op->err = 5;
  io_gather_done (&g, &b);
  for (i = 0; i < K; i++)
    if (r0[i] != 1 || r1[i] != 2 || r1[K + i] != 3) {
      fail ("reads: byte %u holds %u, %u, %u, want 1, 2, 3", i, r0[i], r1[i],
            r1[K + i]);
      break;
    }
  for (i = 0; i < b.n; i++)
    if (b.ops[i].err != (b.ops[i].member == 2 && b.ops[i].off == K ? 5 : 0))
      fail ("op %u (member %u at %" PRIu64 "): error %d", i, b.ops[i].member,
            b.ops[i].off, b.ops[i].err);
  io_batch_free (&b);
  if (failures == 0)
    printf ("ok: member-contiguous ops joined, results and bytes given back\n");
  return failures != 0;
}
