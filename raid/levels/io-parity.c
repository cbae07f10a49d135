/* nbdraid: writes and resync for the parity family (RAID5, RAID6);
 * reads are in read-parity.c, rebuilds in rebuild-parity.c, check and
 * repair in scrub-parity.c.
 *
 * A write is cut into segments: one stripe column (stripe-column.h) and
 * the run of data chunks the request writes across all of it; how each
 * is updated (md's reconstruct-write or read-modify-write, or degraded)
 * is in parity-segment.c.
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
#include "parity-segment.h"
#include "stripe-column.h"

/* Temporary buffer bytes per window, and segments per window. */
#define WINDOW_BYTES (16 * 1024 * 1024)
#define WINDOW_SEGMENTS 256

/* The parity family locks stripes: a unit's lock key is its stripe. */
static uint64_t
parity_lock_key (const struct raid_array *a, uint64_t unit)
{
  return unit / a->geo.data_members;
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
      if (segment_prepare (rq, &segs[s]) == -1
          || segment_add_reads (rq, &segs[s], b) == -1)
        return -1;
    if (array_run (rq->a, b) == 0)
      return 0;
    array_reads_failed (rq->a, b, &rq->bad, &rq->repair, NULL);
    segment_free_all (segs, n);
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
  jp.destage = rq->log == PARITY_LOG_DESTAGE;
  if (read_window (rq, segs, n, &b) == -1)
    goto out;
  io_batch_reset (&b);
  for (s = 0; s < n; s++)
    if (segment_add_writes (rq, &segs[s], &b, &fixes, &log, &jp) == -1)
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
   segment_free_all (segs, n);
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
    gaps |= segment_written_run (rq, &segs[i], 1, &run);
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
      if (segment_written_run (rq, &segs[i], nth, &pass[m].written))
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
        segment_covered (rq, stripe, i, cuts[c], cuts[c + 1], &rq->piece[p],
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

  if (!j->on || rq->resync || rq->log == PARITY_LOG_NONE)
    return n;
  /* With a write-back cache the log keeps room for the cache's destage
   * (journal-write.c lead): smaller windows. */
  if (j->cache.on)
    room = j->area_bytes / 8 - R5L_BLOCK_BYTES;
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
    /* (Not after a window failed: the rest succeeding would hide it.) */
    if (r == 0
        && (bytes >= WINDOW_BYTES || n >= WINDOW_SEGMENTS || stripe == last)) {
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

int
parity_write_locked (struct raid_array *a, const struct stripe_piece *piece,
                     unsigned npieces, uint64_t first, uint64_t last,
                     enum parity_log log)
{
  struct request rq;

  request_init (&rq, a, piece, npieces);
  rq.log = log;
  return run_stripes (&rq, first, last, cut_stripe);
}

/* Write the pieces, which lie in stripes first..last, under those
 * stripes' locks. */
static int
write_stripes (struct raid_array *a, const struct stripe_piece *piece,
               unsigned npieces, uint64_t first, uint64_t last)
{
  int r;

  stripe_lock (&a->locks, first, last, true);
  r = parity_write_locked (a, piece, npieces, first, last, PARITY_LOG_CLIENT);
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

  if (a->journal.cache.on)
    return parity_write_back (a, buf, count, offset);
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
  .destage = parity_destage,
};
