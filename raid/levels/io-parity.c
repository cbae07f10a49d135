/* nbdraid: writes and resync for the parity family (RAID5, RAID6);
 * reads are in read-parity.c, rebuilds in rebuild-parity.c, check and
 * repair in scrub-parity.c.
 *
 * A write is cut into segments: one stripe column (stripe-column.h) and
 * the run of data chunks the request writes across all of it.  Each
 * segment takes md's choice: reconstruct-write (read the data it does
 * not write, compute parity from scratch) or read-modify-write (read
 * the old data and parity, fold the difference in), whichever reads
 * fewer blocks; a segment covering its whole stripe reads nothing.  A
 * segment with a member gone is degraded: it reads every block left,
 * reconstructs the missing ones, and writes what survives.
 *
 * A request is a list of pieces: the whole stripes of one client
 * write, or the writes (and parts of writes) to one stripe gathered
 * while it was busy (stripe-batch.h).
 *
 * Segments are handled in windows: one parallel batch of every read in
 * the window, the parity arithmetic, one parallel batch of every write.
 * A read that fails puts its member aside for the request, the window
 * is planned again degraded, and the member's blocks are rewritten with
 * what they should hold (md's read-error repair).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "levels.h"
#include "stripe-column.h"

/* Temporary buffer bytes per window, and segments per window. */
#define WINDOW_BYTES (16 * 1024 * 1024)
#define WINDOW_SEGMENTS 256

enum seg_mode { SEG_RCW, SEG_RMW, SEG_DEGRADED };

struct segment {
  struct column col;
  struct member_set written;    /* data indices the pieces write in the
                                 * column; none for a resync */
  enum seg_mode mode;
  struct member_set gone;       /* members not to read for this column */
};

/* One request, as its segments see it. */
struct request {
  struct raid_array *a;
  const struct stripe_piece *piece;     /* disjoint */
  unsigned npieces;
  uint64_t chunk, stripe_bytes;
  bool resync;                  /* recompute parity, write no data */
  struct members_view view;     /* members in use, taken under the locks */
  struct member_set bad;        /* members that failed a read in it */
  struct member_set repair;     /* of those, the ones to rewrite */
};

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

/* The parity family locks stripes: a unit's lock key is its stripe. */
static uint64_t
parity_lock_key (const struct raid_array *a, uint64_t unit)
{
  return unit / a->geo.data_members;
}

/* Array offset of data chunk i of stripe `stripe`. */
static uint64_t
chunk_start (const struct request *rq, uint64_t stripe, unsigned i)
{
  return stripe * rq->stripe_bytes + i * rq->chunk;
}

/* The columns [*from, *to) of data chunk i of stripe `stripe`, within
 * [lo, hi), that piece p writes; none when *from >= *to. */
static void
covered (const struct request *rq, uint64_t stripe, unsigned i,
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
    covered (rq, s->col.stripe, i, s->col.lo, s->col.hi, &rq->piece[p],
             &from, &to);
    if (from == s->col.lo && to == s->col.hi)
      return &rq->piece[p];
  }
  return NULL;
}

/* Does one piece write all of data chunk i in segment s, so that its
 * old contents need not be read? */
static bool
fully_written (const struct request *rq, const struct segment *s,
               unsigned i)
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
    covered (rq, s->col.stripe, i, s->col.lo, s->col.hi, &rq->piece[p],
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
static bool
written_run (const struct request *rq, const struct segment *s, unsigned nth,
             struct member_set *run)
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
static int
prepare (const struct request *rq, struct segment *s)
{
  const struct raid_geometry *g = &rq->a->geo;
  unsigned k = g->data_members, blocks = k + g->parity_members, i, b;
  unsigned rcw_reads = 0, rmw_reads = g->parity_members;
  bool want[RAID_MAX_MEMBERS + 2];
  /* md: stripes the initial sync has not reached may have parity that
   * does not match, so never fold a difference into it: recompute it
   * from the data.  Every stripe a client wrote is then consistent, and
   * reconstructing it is right even before the sync gets there. */
  bool synced = s->col.stripe <
    __atomic_load_n (&rq->a->resync_front, __ATOMIC_ACQUIRE);

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
    want[s->col.map.q_coef[i]] = s->mode == SEG_RMW ? written (s, i)
      : !fully_written (rq, s, i);
  for (b = k; b < blocks; b++)
    want[b] = true;
  /* Parity and partial chunks as misaligned as the client's data, so
   * the fast parity routines take them (parity_encode). */
  for (i = 0; i < k; i++) {
    const struct stripe_piece *p = whole_piece (rq, s, i);
    if (p && p->buf) {
      s->col.skew = (uintptr_t) source (rq, s, i, p, s->col.lo) % 32;
      break;
    }
  }
  return column_alloc (&s->col, rq->a, want);
}

/* Add segment s's reads to b: its buffered blocks on members not gone,
 * or for reconstruct-write its buffered data blocks. */
static int
add_reads (const struct request *rq, const struct segment *s,
           struct io_batch *b)
{
  const struct raid_array *a = rq->a;
  unsigned k = a->geo.data_members, blk;

  if (s->mode != SEG_RCW)
    return column_add_reads (a, &s->col, &s->gone, b);
  /* Reconstruct-write reads data only; parity is its output. */
  for (blk = 0; blk < k; blk++)
    if (s->col.block[blk] &&
        io_batch_add (b, IO_READ, s->col.map.block_disk[blk],
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

  if (s->mode == SEG_DEGRADED &&
      column_recover (a, &s->col, &s->gone) == -1)
    return -1;
  for (b = 0; b < k + a->geo.parity_members; b++)
    out[b] = blk[b];
  for (i = 0; i < k; i++) {
    b = s->col.map.q_coef[i];
    if (!written (s, i))
      continue;
    if (s->mode == SEG_RMW)     /* take the old contents out of parity */
      parity_update (code, w, b, blk[b], blk + k);
    if (s->mode != SEG_DEGRADED && fully_written (rq, s, i))
      out[b] = source (rq, s, i, whole_piece (rq, s, i), s->col.lo);
    else
      overlay (rq, s, i);
    if (s->mode == SEG_RMW)     /* and put the new ones in */
      parity_update (code, w, b, out[b], blk + k);
  }
  if (s->mode != SEG_RMW)
    parity_encode (code, w, (uint8_t *const *) out, blk + k);
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

  if (!a->journal.on || rq->resync)
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
static int
add_writes (const struct request *rq, struct segment *s,
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
      else if (!member_set_has (&s->gone, i) &&
               view_add_write (&rq->view, writes, IO_ZERO, i, off, w, NULL))
        return -1;
    return 0;
  }
  if (compute (rq, s, out) == -1 || log_segment (rq, s, out, log) == -1
      || journal_segment (rq, s, out, jp) == -1)
    return -1;
  for (b = 0; b < blocks; b++) {
    unsigned disk = s->col.map.block_disk[b];
    bool fix = member_set_has (&rq->repair, disk);

    if ((member_set_has (&s->gone, disk) && !fix) ||
        (b < k && !data_written[b] && !fix))
      continue;
    if (fix ? io_batch_add (fixes, IO_WRITE, disk, off, w, (void *) out[b])
        : view_add_write (&rq->view, writes, IO_WRITE, disk, off, w,
                          (void *) out[b]))
      return -1;
  }
  return 0;
}

/* Free the column buffers of segs[0..n-1]. */
static void
free_segments (struct segment *segs, unsigned n)
{
  unsigned i;

  for (i = 0; i < n; i++)
    column_free (&segs[i].col);
}

/* Can the request still reconstruct everything, with the members that
 * failed reads in it gone too? */
static bool
alive_for (const struct request *rq)
{
  struct member_set gone;
  unsigned i;

  gone = rq->view.gone;
  for (i = 0; i < rq->view.nrec; i++)
    member_set_add (&gone, rq->view.rec[i]);
  for (i = 0; i < sizeof gone.bits / sizeof gone.bits[0]; i++)
    gone.bits[i] |= rq->bad.bits[i];
  return array_alive_without (rq->a, &gone);
}

/* Plan and run the reads of a window, again and again as members fail
 * reads, until every read worked.  Returns 0 or -1 (errno set). */
static int
read_window (struct request *rq, struct segment *segs, unsigned n,
             struct io_batch *b)
{
  unsigned s;

  for (;;) {
    io_batch_reset (b);
    for (s = 0; s < n; s++)
      if (prepare (rq, &segs[s]) == -1 || add_reads (rq, &segs[s], b) == -1)
        return -1;
    if (array_run (rq->a, b) == 0)
      return 0;
    array_reads_failed (rq->a, b, &rq->bad, &rq->repair, NULL);
    free_segments (segs, n);
    if (!alive_for (rq)) {
      array_log (rq->a, RAID_LOG_ERROR, "array %s: too many members "
                 "failed to read; cannot reconstruct", rq->a->name);
      errno = EIO;
      return -1;
    }
  }
}

/* One window of segments: read (again while reads fail), compute, then
 * write, and rewrite what failed to read. */
static int
write_window (struct request *rq, struct segment *segs, unsigned n)
{
  struct io_batch b, fixes;
  struct ppl_pending log;
  struct journal_pending jp;
  unsigned s;
  size_t i;
  int r = -1;

  io_batch_init (&b);
  io_batch_init (&fixes);
  memset (&log, 0, sizeof log);
  memset (&jp, 0, sizeof jp);
  if (read_window (rq, segs, n, &b) == -1)
    goto out;
  io_batch_reset (&b);
  for (s = 0; s < n; s++)
    if (add_writes (rq, &segs[s], &b, &fixes, &log, &jp) == -1)
      goto out;
  /* The logs are on their members before any write they cover. */
  for (i = 0; i < b.n; i++)
    if (b.ops[i].member < rq->a->geo.members)
      member_set_add (&log.written, b.ops[i].member);
  /* So is the journal, flushed, before any member write (md's
   * write-through r5l_write_stripe). */
  if (ppl_commit (rq->a, &log) == -1 || journal_commit (rq->a, &jp) == -1)
    goto out;
  array_run (rq->a, &b);
  r = array_settle_writes (rq->a, &b);
  if (fixes.n) {
    array_run (rq->a, &fixes);
    if (array_settle_repairs (rq->a, &fixes) == -1)
      r = -1;
  }
 out:
   ppl_finish (rq->a, &log);
   journal_finish (rq->a, &jp);
   free_segments (segs, n);
   io_batch_free (&b);
   io_batch_free (&fixes);
   return r;
}

/* Run a window of segments.  With a partial parity log, a segment that
 * writes chunks apart (pieces gathered on one stripe) is written one
 * run of neighbouring chunks at a time: md's log entries name a run, and
 * a run that spanned an unwritten chunk of a missing member would be
 * left out of the replay.  Each pass is a window of its own. */
static int
run_window (struct request *rq, struct segment *segs, unsigned n)
{
  struct segment *pass;
  unsigned nth, i, m;
  bool gaps = false;
  int r = 0;

  for (i = 0; i < n && rq->a->ppl.on && !rq->resync; i++) {
    struct member_set run;
    gaps |= written_run (rq, &segs[i], 1, &run);
  }
  if (!gaps)
    return write_window (rq, segs, n);
  if (!(pass = malloc (n * sizeof *pass))) {
    errno = ENOMEM;
    return -1;
  }
  for (nth = 0, m = 1; r == 0 && m > 0; nth++) {
    for (i = m = 0; i < n; i++) {
      pass[m] = segs[i];
      if (written_run (rq, &segs[i], nth, &pass[m].written))
        m++;
    }
    if (m)
      r = write_window (rq, pass, m);
  }
  free (pass);
  return r;
}

/* qsort order for uint64_t: ascending. */
static int
compare_u64 (const void *x, const void *y)
{
  uint64_t a = *(const uint64_t *) x, b = *(const uint64_t *) y;
  return a < b ? -1 : a > b;
}

/* Cut the pieces' part of one stripe into segments, appending them to
 * segs: 4K-aligned column ranges over which each data chunk is either
 * written or not.  A piece cuts the stripe where it starts in its first
 * chunk and ends in its last, so this adds at most 2 * npieces + 1. */
static unsigned
cut_stripe (const struct request *rq, uint64_t stripe, struct segment *segs)
{
  uint64_t C = rq->chunk, base = stripe * rq->stripe_bytes;
  uint64_t cuts[2 * STRIPE_BATCH_PIECES + 2], from, to;
  unsigned ncuts = 0, n = 0, c, i, p;

  cuts[ncuts++] = 0;
  cuts[ncuts++] = C;
  for (p = 0; p < rq->npieces; p++) {
    const struct stripe_piece *pc = &rq->piece[p];
    uint64_t rs = max64 (pc->offset, base);
    uint64_t re = min64 (pc->offset + pc->count, base + rq->stripe_bytes);

    if (rs < re) {
      cuts[ncuts++] = align_down ((rs - base) % C);
      cuts[ncuts++] = align_up ((re - base - 1) % C + 1);
    }
  }
  qsort (cuts, ncuts, sizeof *cuts, compare_u64);
  for (c = 0; c + 1 < ncuts; c++) {
    struct segment *s = &segs[n];

    if (cuts[c] == cuts[c + 1])
      continue;
    memset (&s->written, 0, sizeof s->written);
    for (i = 0; i < rq->a->geo.data_members; i++)
      for (p = 0; p < rq->npieces; p++) {
        covered (rq, stripe, i, cuts[c], cuts[c + 1], &rq->piece[p],
                 &from, &to);
        if (from < to)
          member_set_add (&s->written, i);
      }
    if (member_set_count (&s->written) == 0)
      continue;                 /* a gap no piece writes */
    column_init (&s->col, rq->a, stripe, cuts[c], cuts[c + 1]);
    n++;
  }
  return n;
}

/* How many of segs[0..n-1], from the first, one window takes: with a
 * partial parity log, as many as their logs fit in (each member's area
 * less its header, entries in a header); else all. */
static unsigned
ppl_fit (const struct request *rq, const struct segment *segs, unsigned n)
{
  uint64_t room = rq->a->ppl.area_bytes - PPL_HEADER_BYTES, bytes = 0;
  unsigned i;

  if (!rq->a->ppl.on || rq->resync)
    return n;
  for (i = 0; i < n && i < PPL_HDR_MAX_ENTRIES; i++) {
    bytes += segs[i].col.hi - segs[i].col.lo;
    if (bytes > room)
      break;
  }
  return i;
}

/* How many of segs[0..n-1], from the first (one at least), one window
 * takes with a write journal: as many as half its ring holds, so that
 * a window's log always fits beside the previous one's; else all. */
static unsigned
journal_fit (const struct request *rq, const struct segment *segs, unsigned n)
{
  const struct raid_journal *j = &rq->a->journal;
  uint64_t room = j->area_bytes / 2 - R5L_BLOCK_BYTES, bytes = 0;
  unsigned i;

  if (!j->on || rq->resync)
    return n;
  for (i = 0; i < n; i++) {
    bytes += (segs[i].col.hi - segs[i].col.lo) / R5L_BLOCK_BYTES
             * journal_row_bytes (member_set_count (&segs[i].written),
                                  rq->a->geo.parity_members);
    if (bytes > room && i > 0)
      break;
  }
  return i;
}

/* Run segments of stripes first..last through windows; cut(stripe,
 * segs) produces each stripe's segments. */
static int
run_stripes (struct request *rq, uint64_t first, uint64_t last,
             unsigned (*cut) (const struct request *, uint64_t,
                              struct segment *))
{
  const uint64_t per_stripe = rq->a->geo.members * rq->chunk;
  uint64_t stripe, bytes = 0, cap = min64 (last - first + 1, WINDOW_SEGMENTS);
  /* A stripe is one segment but where a piece starts or ends in it. */
  struct segment *segs = malloc ((cap + 2 * rq->npieces + 2) * sizeof *segs);
  unsigned n = 0, fit;
  int r = 0;

  if (!segs) {
    errno = ENOMEM;
    return -1;
  }
  for (stripe = first; stripe <= last && r == 0; stripe++) {
    n += cut (rq, stripe, &segs[n]);
    bytes += per_stripe;
    while (r == 0
           && ((fit = ppl_fit (rq, segs, n)) < n
               || (fit = journal_fit (rq, segs, n)) < n)) {
      r = run_window (rq, segs, fit);
      memmove (segs, segs + fit, (n - fit) * sizeof *segs);
      n -= fit;
    }
    if (bytes >= WINDOW_BYTES || n >= WINDOW_SEGMENTS || stripe == last) {
      r = run_window (rq, segs, n);
      n = 0;
      bytes = 0;
    }
  }
  free (segs);
  return r;
}

/* A request for pieces[0..npieces-1] (none for a resync), with the
 * members in use now: call it under the stripe locks. */
static void
request_init (struct request *rq, struct raid_array *a,
              const struct stripe_piece *piece, unsigned npieces)
{
  memset (rq, 0, sizeof *rq);
  rq->a = a;
  rq->piece = piece;
  rq->npieces = npieces;
  rq->chunk = a->geo.chunk_bytes;
  rq->stripe_bytes = a->geo.chunk_bytes * a->geo.data_members;
  array_view (a, &rq->view);
}

/* Write the pieces, which lie in stripes first..last, under those
 * stripes' locks. */
static int
write_stripes (struct raid_array *a, const struct stripe_piece *piece,
               unsigned npieces, uint64_t first, uint64_t last)
{
  struct request rq;
  int r;

  stripe_lock (&a->locks, first, last, true);
  request_init (&rq, a, piece, npieces);
  r = run_stripes (&rq, first, last, cut_stripe);
  stripe_unlock (&a->locks, first, last);
  return r;
}

/* stripe_batch_fn: update stripes first..last with the pieces. */
static int
write_batch (void *opaque, uint64_t first, uint64_t last,
             const struct stripe_piece *piece, unsigned npieces)
{
  return write_stripes (opaque, piece, npieces, first, last);
}

/* The write op: through the stripe batches (stripe-batch.h), which
 * gather the parts of writes that leave a stripe partly unwritten. */
static int
parity_write (struct raid_array *a, const uint8_t *buf, uint64_t count,
              uint64_t offset)
{
  struct stripe_piece piece = { buf, offset, count };

  return stripe_batch_write (&parity_state (a)->batches,
                             a->geo.chunk_bytes * a->geo.data_members, &piece,
                             write_batch, a);
}

/* Where array unit `unit` is read directly: its data chunk's member, at
 * its stripe's offset. */
static void
parity_locate (const struct raid_array *a, uint64_t unit, unsigned *member,
               uint64_t *member_off)
{
  struct stripe_map map;
  uint64_t stripe = unit / a->geo.data_members;

  geometry_stripe_map (&a->geo, stripe, &map);
  *member = map.data_disk[unit % a->geo.data_members];
  *member_off = stripe * a->geo.chunk_bytes;
}

/* The parity family resyncs by stripe: the stripe holding offset. */
static uint64_t
parity_sync_unit_of (const struct raid_array *a, uint64_t offset)
{
  return offset / (a->geo.chunk_bytes * a->geo.data_members);
}

/* Stripes to resync: one per chunk of a member's data area. */
static uint64_t
parity_sync_units (const struct raid_array *a)
{
  return a->geo.member_bytes / a->geo.chunk_bytes;
}

/* A resync segment: the whole stripe, no data written. */
static unsigned
cut_resync (const struct request *rq, uint64_t stripe, struct segment *segs)
{
  column_init (&segs[0].col, rq->a, stripe, 0, rq->chunk);
  memset (&segs[0].written, 0, sizeof segs[0].written);
  return 1;
}

bool
stripe_in_holes (struct raid_array *a, uint64_t s)
{
  const uint64_t C = a->geo.chunk_bytes;
  unsigned m;

  for (m = 0; m < a->geo.members; m++)
    if (slot_state (&a->slots[m]) != SLOT_ACTIVE ||
        !array_member_hole (a, m, s * C, C))
      return false;
  return true;
}

/* Recompute P (and Q) of stripes first..first+n-1 from their data,
 * one run of stripes with data at a time. */
static int
parity_sync (struct raid_array *a, uint64_t first, uint64_t n,
             uint64_t *done)
{
  const uint64_t end = first + n;
  struct request rq;
  uint64_t s, next;
  int r = 0;

  *done = 0;
  stripe_lock (&a->locks, first, end - 1, true);
  request_init (&rq, a, NULL, 0);
  rq.resync = true;
  for (s = first; s < end && r == 0; s = next + 1) {
    for (next = s; next < end && !stripe_in_holes (a, next); next++)
      ;
    if (next > s) {
      r = run_stripes (&rq, s, next - 1, cut_resync);
      *done += next - s;
    }
  }
  stripe_unlock (&a->locks, first, end - 1);
  return r;
}

/* Member unit mu of any member is stripe mu: its lock key. */
static void
parity_member_keys (const struct raid_array *a, unsigned m, uint64_t first,
                    uint64_t last, void (*fn) (void *, uint64_t),
                    void *opaque)
{
  uint64_t s;

  for (s = first; s <= last; s++)
    fn (opaque, s);
}

const struct raid_level_ops parity_level_ops = {
  .setup = parity_setup,
  .teardown = parity_teardown,
  .lock_key = parity_lock_key,
  .read = parity_read,
  .write = parity_write,
  .locate = parity_locate,
  .sync_units = parity_sync_units,
  .sync = parity_sync,
  .sync_unit_of = parity_sync_unit_of,
  .reconstruct = parity_reconstruct,
  .unwritten = parity_unwritten,
  .member_keys = parity_member_keys,
  .check = parity_check,
};
