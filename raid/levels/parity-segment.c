/* nbdraid: one segment of a parity write or resync (io-parity.c cuts
 * requests into segments and runs them in windows).
 *
 * A segment is one stripe column (stripe-column.h) and the run of data
 * chunks the request writes across all of it.  Each segment takes md's
 * choice: reconstruct-write (read the data it does not write, compute
 * parity from scratch) or read-modify-write (read the old data and
 * parity, fold the difference in), whichever reads fewer blocks; a
 * segment covering its whole stripe reads nothing.  A segment with a
 * member gone is degraded: it reads every block left, reconstructs the
 * missing ones, and writes what survives.  Its reads, its new blocks,
 * its writes, and its entries in the partial parity log or the write
 * journal are worked out here.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "levels.h"
#include "parity-segment.h"
#include "stripe-column.h"

/* The members a column of stripe `stripe` ending at `hi` may not use. */
static void
column_gone (const struct request *rq, uint64_t stripe, uint64_t hi,
             struct member_set *gone)
{
  unsigned i;

  view_gone (&rq->view, stripe * rq->chunk + hi, gone);
  for (i = 0; i < sizeof gone->bits / sizeof gone->bits[0]; i++)
    gone->bits[i] |= rq->bad.bits[i];
}

/* Array offset of data chunk i of stripe `stripe`. */
static uint64_t
chunk_start (const struct request *rq, uint64_t stripe, unsigned i)
{
  return stripe * rq->stripe_bytes + i * rq->chunk;
}

/* The columns [*from, *to) of data chunk i of stripe `stripe`, within
 * [lo, hi), that piece p writes; none when *from >= *to. */
void
segment_covered (const struct request *rq, uint64_t stripe, unsigned i,
                 uint64_t lo, uint64_t hi, const struct stripe_piece *p,
                 uint64_t *from, uint64_t *to)
{
  uint64_t start = chunk_start (rq, stripe, i), end = p->offset + p->count;

  *from = max64 (lo, p->offset > start ? p->offset - start : 0);
  *to = end > start ? min64 (hi, end - start) : 0;
}

/* Does segment s write data chunk i? */
static bool
written (const struct segment *s, unsigned i)
{
  return member_set_has (&s->written, i);
}

/* The piece that writes all of data chunk i in segment s, or NULL. */
static const struct stripe_piece *
whole_piece (const struct request *rq, const struct segment *s, unsigned i)
{
  uint64_t from, to;
  unsigned p;

  if (!written (s, i))
    return NULL;
  for (p = 0; p < rq->npieces; p++) {
    segment_covered (rq, s->col.stripe, i, s->col.lo, s->col.hi, &rq->piece[p],
                     &from, &to);
    if (from == s->col.lo && to == s->col.hi)
      return &rq->piece[p];
  }
  return NULL;
}

/* Does one piece write all of data chunk i in segment s, so that its
 * old contents need not be read? */
static bool
fully_written (const struct request *rq, const struct segment *s, unsigned i)
{
  return whole_piece (rq, s, i) != NULL;
}

/* Piece p's bytes for column col of data chunk i. */
static const uint8_t *
source (const struct request *rq, const struct segment *s, unsigned i,
        const struct stripe_piece *p, uint64_t col)
{
  if (!p->buf)
    return parity_state (rq->a)->zeros;
  return p->buf + (chunk_start (rq, s->col.stripe, i) + col - p->offset);
}

/* Copy the pieces' bytes over data chunk i's block. */
static void
overlay (const struct request *rq, struct segment *s, unsigned i)
{
  uint8_t *block = s->col.block[s->col.map.q_coef[i]];
  uint64_t from, to;
  unsigned p;

  for (p = 0; p < rq->npieces; p++) {
    segment_covered (rq, s->col.stripe, i, s->col.lo, s->col.hi, &rq->piece[p],
                     &from, &to);
    if (from < to)
      memcpy (block + (from - s->col.lo),
              source (rq, s, i, &rq->piece[p], from), to - from);
  }
}

/* Is a member holding one of the first `blocks` blocks of column c in set? */
static bool
stripe_touches (const struct member_set *set, const struct column *c,
                unsigned blocks)
{
  unsigned b;

  for (b = 0; b < blocks; b++)
    if (member_set_has (set, c->map.block_disk[b]))
      return true;
  return false;
}

/* The nth run of data chunks segment s writes next to each other (from
 * 0), into *run; false if it has no nth. */
bool
segment_written_run (const struct request *rq, const struct segment *s,
                     unsigned nth, struct member_set *run)
{
  unsigned i, runs = 0;
  bool in = false;

  memset (run, 0, sizeof *run);
  for (i = 0; i < rq->a->geo.data_members; i++) {
    if (written (s, i) && !in)
      runs++;
    in = written (s, i);
    if (in && runs == nth + 1)
      member_set_add (run, i);
  }
  return runs > nth;
}

/* Decide how to update a segment and allocate its buffers. */
int
segment_prepare (const struct request *rq, struct segment *s)
{
  const struct raid_geometry *g = &rq->a->geo;
  unsigned k = g->data_members, blocks = k + g->parity_members, i, b;
  unsigned rcw_reads = 0, rmw_reads = g->parity_members;
  bool want[RAID_MAX_MEMBERS + 2];
  /* md: stripes the initial sync has not reached may have parity that
   * does not match, so never fold a difference into it: recompute it
   * from the data.  Every stripe a client wrote is then consistent, and
   * reconstructing it is right even before the sync gets there. */
  bool synced = s->col.stripe
                < __atomic_load_n (&rq->a->resync_front, __ATOMIC_ACQUIRE);

  column_gone (rq, s->col.stripe, s->col.hi, &s->gone);
  if (stripe_touches (&s->gone, &s->col, blocks)) {
    s->mode = SEG_DEGRADED;
    for (b = 0; b < blocks; b++)
      want[b] = true;
    return column_alloc (&s->col, rq->a, want);
  }
  for (i = 0; i < k; i++) {
    rcw_reads += !fully_written (rq, s, i);
    rmw_reads += written (s, i);
  }
  s->mode = !rq->resync && synced && rmw_reads < rcw_reads ? SEG_RMW : SEG_RCW;
  for (i = 0; i < k; i++)
    want[s->col.map.q_coef[i]]
        = s->mode == SEG_RMW ? written (s, i) : !fully_written (rq, s, i);
  for (b = k; b < blocks; b++)
    want[b] = true;
  /* Parity and partial chunks as misaligned as the client's data, so
   * the fast parity routines take them (parity_encode). */
  for (i = 0; i < k; i++) {
    const struct stripe_piece *p = whole_piece (rq, s, i);
    if (p && p->buf) {
      s->col.skew = (uintptr_t)source (rq, s, i, p, s->col.lo) % 32;
      break;
    }
  }
  return column_alloc (&s->col, rq->a, want);
}

/* Add segment s's reads to b: its buffered blocks on members not gone,
 * or for reconstruct-write its buffered data blocks. */
int
segment_add_reads (const struct request *rq, const struct segment *s,
                   struct io_batch *b)
{
  const struct raid_array *a = rq->a;
  unsigned k = a->geo.data_members, blk;

  if (s->mode != SEG_RCW)
    return column_add_reads (a, &s->col, &s->gone, b);
  /* Reconstruct-write reads data only; parity is its output. */
  for (blk = 0; blk < k; blk++)
    if (s->col.block[blk]
        && io_batch_add (b, IO_READ, s->col.map.block_disk[blk],
                         column_offset (a, &s->col), s->col.hi - s->col.lo,
                         s->col.block[blk]))
      return -1;
  return 0;
}

/* Work out the new contents of every block; out[b] points at them. */
static int
compute (const struct request *rq, struct segment *s, const uint8_t **out)
{
  struct raid_array *a = rq->a;
  const struct parity_code *code = &parity_state (a)->code;
  unsigned k = a->geo.data_members, i, b;
  size_t w = s->col.hi - s->col.lo;
  uint8_t **blk = s->col.block;

  if (s->mode == SEG_DEGRADED && column_recover (a, &s->col, &s->gone) == -1)
    return -1;
  for (b = 0; b < k + a->geo.parity_members; b++)
    out[b] = blk[b];
  for (i = 0; i < k; i++) {
    b = s->col.map.q_coef[i];
    if (!written (s, i))
      continue;
    if (s->mode == SEG_RMW) /* take the old contents out of parity */
      parity_update (code, w, b, blk[b], blk + k);
    if (s->mode != SEG_DEGRADED && fully_written (rq, s, i))
      out[b] = source (rq, s, i, whole_piece (rq, s, i), s->col.lo);
    else
      overlay (rq, s, i);
    if (s->mode == SEG_RMW) /* and put the new ones in */
      parity_update (code, w, b, out[b], blk + k);
  }
  if (s->mode != SEG_RMW)
    parity_encode (code, w, (uint8_t *const *)out, blk + k);
  return 0;
}

/* Does segment s zero its whole stripe?  Zeros have zero parity, so
 * the stripe is deallocated on every member instead of written. */
static bool
zeroes_stripe (const struct request *rq, const struct segment *s)
{
  const struct stripe_piece *p;
  unsigned i;

  /* The journal logs the zeros as it logs any data. */
  if (rq->resync || s->col.hi - s->col.lo != rq->chunk || rq->a->journal.on)
    return false;
  for (i = 0; i < rq->a->geo.data_members; i++)
    if (!(p = whole_piece (rq, s, i)) || p->buf)
      return false;
  return true;
}

/* With a partial parity log: log segment s on its parity member, given
 * the new contents of its blocks (out; NULL when it zeroes its whole
 * stripe).  The entry covers the data chunks from the first written to
 * the last; its partial parity is the XOR of the others, which is the
 * new parity XOR the ones it covers.  Nothing to log for a resync or
 * when the parity member is gone (md logs neither). */
static int
log_segment (const struct request *rq, const struct segment *s,
             const uint8_t **out, struct ppl_pending *log)
{
  struct raid_array *a = rq->a;
  unsigned k = a->geo.data_members, first = k, last = 0, i;
  size_t w = s->col.hi - s->col.lo, j;
  uint64_t data_sector;
  uint8_t *pp = NULL;
  int r;

  if (!a->ppl.on || rq->resync || member_set_has (&s->gone, s->col.map.p_disk))
    return 0;
  for (i = 0; i < k; i++)
    if (written (s, i)) {
      if (first == k)
        first = i;
      last = i;
    }
  data_sector = (chunk_start (rq, s->col.stripe, first) + s->col.lo) / 512;
  if (out && !(first == 0 && last == k - 1)) {
    if (!(pp = malloc (w))) {
      errno = ENOMEM;
      return -1;
    }
    memcpy (pp, out[k], w);
    for (i = first; i <= last; i++)
      for (j = 0; j < w; j++)
        pp[j] ^= out[s->col.map.q_coef[i]][j];
  }
  r = ppl_add (log, s->col.map.p_disk, a->ppl.signature, data_sector,
               (uint32_t)((last - first + 1) * w), pp, pp ? (uint32_t)w : 0);
  free (pp);
  return r;
}

/* With a write journal: queue segment s's stripe rows, given the new
 * contents of its blocks: each 4 KiB row's data pages the segment
 * writes (at their array sectors), then the row's P (and Q) at its
 * member sector, as md's r5l_log_stripe logs a stripe.  Nothing for a
 * resync (md logs none). */
static int
journal_segment (const struct request *rq, const struct segment *s,
                 const uint8_t **out, struct journal_pending *jp)
{
  struct raid_array *a = rq->a;
  unsigned k = a->geo.data_members, i;
  uint64_t row, base = column_offset (a, &s->col);

  if (!a->journal.on || rq->resync || rq->log == PARITY_LOG_NONE)
    return 0;
  for (row = 0; row < s->col.hi - s->col.lo; row += R5L_BLOCK_BYTES) {
    for (i = 0; i < k; i++)
      if (written (s, i)
          && journal_add_data (
                 jp,
                 (chunk_start (rq, s->col.stripe, i) + s->col.lo + row) / 512,
                 out[s->col.map.q_coef[i]] + row)
                 == -1)
        return -1;
    if (journal_add_parity (jp, (base + row) / 512, a->geo.parity_members,
                            out[k] + row,
                            a->geo.parity_members > 1 ? out[k + 1] + row : NULL)
        == -1)
      return -1;
  }
  return 0;
}

/* Writes of segment s: data it writes, parity, and blocks of members
 * being repaired; nothing to a member that is gone for good. */
int
segment_add_writes (const struct request *rq, struct segment *s,
                    struct io_batch *writes, struct io_batch *fixes,
                    struct ppl_pending *log, struct journal_pending *jp)
{
  struct raid_array *a = rq->a;
  const struct raid_geometry *g = &a->geo;
  unsigned k = g->data_members, blocks = k + g->parity_members, i, b;
  uint64_t off = column_offset (a, &s->col), w = s->col.hi - s->col.lo;
  const uint8_t *out[RAID_MAX_MEMBERS + 2];
  bool data_written[RAID_MAX_MEMBERS + 2] = { false };

  for (i = 0; i < k; i++)
    data_written[s->col.map.q_coef[i]] = written (s, i);

  if (zeroes_stripe (rq, s)) {
    if (log_segment (rq, s, NULL, log) == -1)
      return -1;
    for (i = 0; i < g->members; i++)
      if (member_set_has (&rq->repair, i)) {
        if (io_batch_add (fixes, IO_ZERO, i, off, w, NULL))
          return -1;
      }
      else if (!member_set_has (&s->gone, i)
               && view_add_write (&rq->view, writes, IO_ZERO, i, off, w, NULL))
        return -1;
    return 0;
  }
  if (compute (rq, s, out) == -1 || log_segment (rq, s, out, log) == -1
      || journal_segment (rq, s, out, jp) == -1)
    return -1;
  for (b = 0; b < blocks; b++) {
    unsigned disk = s->col.map.block_disk[b];
    bool fix = member_set_has (&rq->repair, disk);

    if ((member_set_has (&s->gone, disk) && !fix)
        || (b < k && !data_written[b] && !fix))
      continue;
    if (fix ? io_batch_add (fixes, IO_WRITE, disk, off, w, (void *)out[b])
            : view_add_write (&rq->view, writes, IO_WRITE, disk, off, w,
                              (void *)out[b]))
      return -1;
  }
  return 0;
}

/* Free the column buffers of segs[0..n-1]. */
void
segment_free_all (struct segment *segs, unsigned n)
{
  unsigned i;

  for (i = 0; i < n; i++)
    column_free (&segs[i].col);
}
