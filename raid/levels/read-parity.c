/* nbdraid: reads for the parity family (RAID5, RAID6).
 *
 * Pieces on members in use are read straight into the client's buffer;
 * pieces on a member that is gone, or whose read fails, are
 * reconstructed from their stripe's column.  A failed read puts its
 * member aside for the request, and the member's blocks are rewritten
 * with what they should hold (md's read-error repair).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stripe-column.h"

/* Rewrite the ranges that failed to read with what they should hold. */
static int
repair_ranges (struct raid_array *a, struct io_batch *bad,
               const struct member_set *gone)
{
  struct io_batch fixes;
  struct scratch scratch = { NULL, 0 };
  uint8_t **bufs = calloc (bad->n ? bad->n : 1, sizeof *bufs);
  size_t i;
  int r = -1;

  io_batch_init (&fixes);
  if (!bufs)
    goto out;
  for (i = 0; i < bad->n; i++) {
    const struct io_op *op = &bad->ops[i];
    bufs[i] = malloc (op->len);
    if (!bufs[i] ||
        parity_reconstruct (a, op->member, op->off, op->len, gone, bufs[i],
                            &scratch) ||
        io_batch_add (&fixes, IO_WRITE, op->member, op->off, op->len,
                      bufs[i]))
      goto out;
  }
  array_run (a, &fixes);
  r = array_settle_repairs (a, &fixes);
 out:
  for (i = 0; bufs && i < bad->n; i++)
    free (bufs[i]);
  free (bufs);
  scratch_free (&scratch);
  io_batch_free (&fixes);
  return r;
}

/* A piece of a read whose data member is gone: where it comes from in
 * which reconstructed column. */
struct rebuilt_piece {
  size_t column;
  unsigned block;
  uint64_t within;
  uint64_t len;
  uint8_t *buf;
};

struct degraded_read {
  struct column *cols;
  size_t ncols, cap_cols;
  struct rebuilt_piece *pieces;
  size_t npieces, cap_pieces;
};

/* Room for entry n in array *p of *cap entries of size bytes, doubling
 * it when full.  0, or -1 (ENOMEM). */
static int
grow (void **p, size_t *cap, size_t n, size_t size)
{
  void *np;

  if (n < *cap)
    return 0;
  *cap = *cap ? 2 * *cap : 8;
  np = realloc (*p, *cap * size);
  if (!np) {
    errno = ENOMEM;
    return -1;
  }
  *p = np;
  return 0;
}

/* Note a piece to reconstruct, widening its stripe's column to cover
 * it (the pieces of one stripe come one after another). */
static int
add_rebuilt_piece (struct raid_array *a, struct degraded_read *d,
                   uint64_t stripe, unsigned block, uint64_t within,
                   uint64_t len, uint8_t *buf)
{
  struct column *c = d->ncols ? &d->cols[d->ncols - 1] : NULL;

  if (!c || c->stripe != stripe) {
    if (grow ((void **) &d->cols, &d->cap_cols, d->ncols, sizeof *c))
      return -1;
    c = &d->cols[d->ncols++];
    column_init (c, a, stripe, align_down (within), align_up (within + len));
  }
  c->lo = min64 (c->lo, align_down (within));
  c->hi = max64 (c->hi, align_up (within + len));
  if (grow ((void **) &d->pieces, &d->cap_pieces, d->npieces,
            sizeof *d->pieces))
    return -1;
  d->pieces[d->npieces++] = (struct rebuilt_piece) {
    d->ncols - 1, block, within, len, buf
  };
  return 0;
}

/* Free the columns' buffers and forget every column and piece, to plan
 * the read again. */
static void
degraded_read_reset (struct degraded_read *d)
{
  size_t i;

  for (i = 0; i < d->ncols; i++)
    column_free (&d->cols[i]);
  d->ncols = d->npieces = 0;
}

/* What a read may not use in a stripe, for bytes ending at end. */
static void
read_gone (const struct members_view *v, const struct member_set *bad,
           uint64_t member_end, struct member_set *gone)
{
  unsigned i;

  view_gone (v, member_end, gone);
  for (i = 0; i < sizeof gone->bits / sizeof gone->bits[0]; i++)
    gone->bits[i] |= bad->bits[i];
}

/* Plan a read: pieces on usable members are read directly, the others
 * are reconstructed from their stripe's column. */
static int
plan_read (struct raid_array *a, uint8_t *buf, uint64_t count,
           uint64_t offset, const struct members_view *v,
           const struct member_set *bad, struct io_batch *b,
           struct degraded_read *d)
{
  const uint64_t C = a->geo.chunk_bytes;
  const unsigned dm = a->geo.data_members;
  bool want[RAID_MAX_MEMBERS + 2];
  struct member_set gone;
  struct stripe_map map;
  uint64_t mapped = UINT64_MAX;
  size_t i;
  unsigned blk;

  while (count > 0) {
    uint64_t unit = offset / C, within = offset % C;
    uint64_t len = min64 (C - within, count), stripe = unit / dm;
    unsigned idx = unit % dm;

    if (stripe != mapped) {
      geometry_stripe_map (&a->geo, stripe, &map);
      mapped = stripe;
    }
    read_gone (v, bad, stripe * C + within + len, &gone);
    if (!member_set_has (&gone, map.data_disk[idx])) {
      if (io_batch_add (b, IO_READ, map.data_disk[idx], stripe * C + within,
                        len, buf))
        return -1;
    }
    else if (add_rebuilt_piece (a, d, stripe, map.q_coef[idx], within, len,
                                buf))
      return -1;
    buf += len;
    offset += len;
    count -= len;
  }
  for (blk = 0; blk < column_blocks (a); blk++)
    want[blk] = true;
  for (i = 0; i < d->ncols; i++) {
    read_gone (v, bad, column_offset (a, &d->cols[i]) +
               (d->cols[i].hi - d->cols[i].lo), &gone);
    if (column_alloc (&d->cols[i], a, want) ||
        column_add_reads (a, &d->cols[i], &gone, b))
      return -1;
  }
  return 0;
}

int
parity_read (struct raid_array *a, uint8_t *buf, uint64_t count,
             uint64_t offset)
{
  const uint64_t C = a->geo.chunk_bytes;
  uint64_t first = offset / C, last = (offset + count - 1) / C;
  struct member_set bad = { { 0 } }, repair = { { 0 } }, gone;
  struct degraded_read d = { 0 };
  struct members_view v;
  struct io_batch b, failed;
  size_t i;
  unsigned m;
  int r = -1;

  io_batch_init (&b);
  io_batch_init (&failed);
  array_lock_units (a, first, last, false);
  array_view (a, &v);
  for (;;) {
    io_batch_reset (&b);
    degraded_read_reset (&d);
    if (plan_read (a, buf, count, offset, &v, &bad, &b, &d))
      goto out;
    if (array_run (a, &b) == 0)
      break;
    if (array_reads_failed (a, &b, &bad, &repair, &failed))
      goto out;
    read_gone (&v, &bad, UINT64_MAX, &gone);
    if (!array_alive_without (a, &gone)) {
      array_log (a, RAID_LOG_ERROR, "array %s: too many members failed to "
                 "read; cannot reconstruct", a->name);
      errno = EIO;
      goto out;
    }
  }
  for (i = 0; i < d.ncols; i++) {
    read_gone (&v, &bad, column_offset (a, &d.cols[i]) +
               (d.cols[i].hi - d.cols[i].lo), &gone);
    if (column_recover (a, &d.cols[i], &gone))
      goto out;
  }
  for (i = 0; i < d.npieces; i++) {
    const struct rebuilt_piece *p = &d.pieces[i];
    const struct column *c = &d.cols[p->column];
    memcpy (p->buf, c->block[p->block] + (p->within - c->lo), p->len);
  }
  /* Rebuild the failed ranges from every member still fully usable. */
  read_gone (&v, &bad, UINT64_MAX, &gone);
  for (m = 0; m < v.nrec; m++)
    member_set_add (&gone, v.rec[m]);
  r = failed.n ? repair_ranges (a, &failed, &gone) : 0;
  /* Writes not yet on the members, under the same locks. */
  if (r == 0 && a->journal.cache.on)
    journal_cache_overlay (&a->journal.cache, buf, count, offset);
 out:
  array_unlock_units (a, first, last);
  degraded_read_reset (&d);
  free (d.cols);
  free (d.pieces);
  io_batch_free (&b);
  io_batch_free (&failed);
  return r;
}
