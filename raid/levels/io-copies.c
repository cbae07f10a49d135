/* nbdraid: reads and writes for the copies family (RAID0, RAID1, RAID10).
 *
 * Every array unit lives in one or more places; a write goes to all of
 * them that are in use, a read to the fastest, least busy one (see
 * read-latency.c for which copies are slow).  No parity, so
 * zeroing is a member zero (hole punch) on every copy.  Where a read
 * fails, the other copies are read instead and the failed range is
 * rewritten from them (md's read-error repair).  Resync and check are
 * scrub-copies.c's, a member's rebuild rebuild-copies.c's.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "array.h"
#include "copies.h"
#include "levels.h"
#include "read-latency.h"

/* The setup op: the read latency rule's state, where there are copies
 * to choose from (not RAID0). */
static int
copies_setup (struct raid_array *a, char *err, size_t errlen)
{
  if (a->geo.copies < 2)
    return 0;
  a->level_state = read_latency_new (&a->geo);
  if (!a->level_state) {
    snprintf (err, errlen, "array %s: out of memory", a->name);
    return -1;
  }
  return 0;
}

static void
copies_teardown (struct raid_array *a)
{
  read_latency_free (a->level_state);
  a->level_state = NULL;
}

/* The copies family locks units: a unit is its own lock key. */
static uint64_t
copies_lock_key (const struct raid_array *a, uint64_t unit)
{
  return unit;
}

/* May copy p serve bytes up to end_within of its unit: its member not
 * in bad, and usable that far into its data area? */
bool
copies_place_usable (const struct raid_array *a, const struct members_view *v,
              const struct member_set *bad, const struct place *p,
              uint64_t end_within)
{
  return !member_set_has (bad, p->disk) &&
    view_usable (v, p->disk, p->member_unit * a->geo.unit_bytes + end_within);
}

/* A write-mostly copy (md's WriteMostly1, a far mirror): read only when
 * no other copy can serve. */
bool
copies_write_mostly (const struct raid_array *a, const struct place *p)
{
  return a->slots[p->disk].sb.devflags & RAID_DEVFLAG_WRITE_MOSTLY;
}

/* What one request's choice of copies goes by. */
struct read_plan {
  unsigned load[RAID_MAX_MEMBERS];      /* units it reads from each */
  uint64_t next[RAID_MAX_MEMBERS];      /* where each one's reads end */
  unsigned turn;                /* its place among requests */
  struct member_set slow;       /* read-latency.c: copies read last */
  int probe;                    /* a slow copy read first, or -1 */
};

/* Which copies a request tries first: a slow copy it probes, then
 * ordinary copies, then slow ones (read-latency.c), then write-mostly
 * ones.  Lower comes first. */
static unsigned
read_rank (const struct raid_array *a, const struct read_plan *rp,
           const struct place *p)
{
  if (copies_write_mostly (a, p))
    return 3;
  if ((int) p->disk == rp->probe)
    return 0;
  return member_set_has (&rp->slow, p->disk) ? 2 : 1;
}

/* The copy a resync copies over the others, and the only one read
 * where the resync has not been: the first usable copy that is not
 * write-mostly (md's raid1 sync_request reads one, as write-behind may
 * leave a write-mostly copy behind), else the first usable one.  NULL
 * if none is usable. */
const struct place *
copies_sync_source (const struct raid_array *a, const struct members_view *v,
             const struct member_set *bad, const struct place *places,
             unsigned n, uint64_t end_within)
{
  const struct place *wm = NULL;
  unsigned c;

  for (c = 0; c < n; c++)
    if (copies_place_usable (a, v, bad, &places[c], end_within)) {
      if (!copies_write_mostly (a, &places[c]))
        return &places[c];
      if (!wm)
        wm = &places[c];
    }
  return wm;
}

/* The reads waiting on disk: those the request plans there, and the
 * member's operations in flight.  Turns alone do not spread a stream:
 * RAID10 n2 over 16 disks at 512K chunks gives each pair every fourth
 * 1M read, whose turns then all have the same parity, and half the
 * disks sat idle. */
static unsigned
queued (const struct raid_array *a, const struct read_plan *rp, unsigned disk)
{
  const struct member *m = a->slots[disk].io;

  return rp->load[disk]
         + (m ? __atomic_load_n (&m->ops_in_flight, __ATOMIC_RELAXED) : 0);
}

/* The copy that carries on where the request's reads of its member
 * end, so a request is one read of each member it reads where the
 * layout allows (md reads a request from one disk too; splitting it
 * over the copies costs more in hand-offs than it gains), unless that
 * copy is slow or write-mostly.  Any earlier read of the request
 * counts, not only the last unit's: RAID10's near copies hold a
 * request's units in turn (n2 over 6 disks: units 0, 3, 6... on disks
 * 0 and 1, one after the other on each), and reading them from
 * alternating copies made every unit a member request of its own.
 * Otherwise the usable copy of the lowest rank (a probe, ordinary,
 * slow, write-mostly), among those the least loaded (queued); ties go
 * round with turn, one per request, so requests take the copies in
 * turn.
 * Units the initial sync has not reached are read from their resync's
 * source only, as md does, so two reads never disagree.  NULL if no
 * copy is usable. */
static const struct place *
pick_copy (const struct raid_array *a, const struct members_view *v,
           const struct member_set *bad, const struct place *places,
           unsigned n, uint64_t unit, uint64_t end_within,
           const struct read_plan *rp)
{
  const struct place *best = NULL;
  unsigned i, rank, best_rank = 0;

  if (unit >= __atomic_load_n (&a->resync_front, __ATOMIC_ACQUIRE) &&
      (best = copies_sync_source (a, v, bad, places, n, end_within)))
    return best;
  for (i = 0; i < n; i++)
    if (rp->load[places[i].disk] > 0
        && places[i].member_unit == rp->next[places[i].disk]
        && read_rank (a, rp, &places[i]) <= 1
        && copies_place_usable (a, v, bad, &places[i], end_within))
      return &places[i];
  for (i = 0; i < n; i++) {
    const struct place *p = &places[(rp->turn + i) % n];
    if (!copies_place_usable (a, v, bad, p, end_within))
      continue;
    rank = read_rank (a, rp, p);
    if (!best || rank < best_rank
        || (rank == best_rank
            && queued (a, rp, p->disk) < queued (a, rp, best->disk))) {
      best = p;
      best_rank = rank;
    }
  }
  return best;
}

/* Plan reads of [offset, offset+count) from usable copies. */
static int
plan_reads (struct raid_array *a, uint8_t *buf, uint64_t count,
            uint64_t offset, const struct members_view *v,
            const struct member_set *bad, struct io_batch *b)
{
  const struct raid_geometry *g = &a->geo;
  struct place places[RAID_MAX_MEMBERS];
  struct read_plan rp = { .probe = -1 };
  struct member_set first = { { 0 } };
  unsigned i, nfirst;

  rp.turn = __atomic_fetch_add (&a->read_turn, 1, __ATOMIC_RELAXED);
  if (a->level_state) {
    nfirst = geometry_unit_places (g, offset / g->unit_bytes, places);
    for (i = 0; i < nfirst; i++)
      member_set_add (&first, places[i].disk);
    read_latency_plan (a->level_state, a, rp.turn, &first, &rp.slow,
                       &rp.probe);
  }
  while (count > 0) {
    uint64_t unit = offset / g->unit_bytes, within = offset % g->unit_bytes;
    uint64_t len = g->unit_bytes - within;
    unsigned n = geometry_unit_places (g, unit, places);
    const struct place *p;

    if (len > count)
      len = count;
    p = pick_copy (a, v, bad, places, n, unit, within + len, &rp);
    if (!p) {
      array_log (a, RAID_LOG_ERROR, "array %s: no readable copy left of "
                 "array offset %" PRIu64, a->name, offset);
      errno = EIO;
      return -1;
    }
    rp.load[p->disk]++;
    rp.next[p->disk] = p->member_unit + 1;
    if (io_batch_add (b, IO_READ, p->disk,
                      p->member_unit * g->unit_bytes + within, len, buf))
      return -1;
    buf += len;
    offset += len;
    count -= len;
  }
  return 0;
}

/* Does b read a write-mostly copy? */
static bool
reads_write_mostly (const struct raid_array *a, const struct io_batch *b)
{
  size_t i;

  for (i = 0; i < b->n; i++)
    if (b->ops[i].member < a->geo.members &&
        a->slots[b->ops[i].member].sb.devflags & RAID_DEVFLAG_WRITE_MOSTLY)
      return true;
  return false;
}

/* Read [offset, offset + count) with its units held shared (as writes
 * hold them) or alone: 0, -1, or 1 if the read must be made again with
 * them held alone.  Held shared, a write may change the range between
 * the read and the rewrite of a copy found bad (old data back on that
 * copy beside new on the others), or keep queueing behind-writes for a
 * read of a write-mostly copy to wait for: held alone, no write comes
 * meanwhile.  The failures found (bad, repair, fix) carry over to the
 * read made again, which reads the copies found bad no more. */
static int
read_held (struct raid_array *a, uint8_t *buf, uint64_t count,
           uint64_t offset, bool alone, struct member_set *bad,
           struct member_set *repair, struct io_batch *fix)
{
  uint64_t first = offset / a->geo.unit_bytes;
  uint64_t last = (offset + count - 1) / a->geo.unit_bytes;
  struct members_view v;
  struct io_batch b;
  int r = -1;

  io_batch_init (&b);
  array_lock_units (a, first, last, alone);
  array_view (a, &v);
  for (;;) {
    io_batch_reset (&b);
    if (plan_reads (a, buf, count, offset, &v, bad, &b))
      goto out;
    if (reads_write_mostly (a, &b)) {
      if (!alone) {
        r = 1;
        goto out;
      }
      behind_wait_range (a, offset, count);
    }
    if (array_run (a, &b) == 0)
      break;
    if (array_reads_failed (a, &b, bad, repair, fix))
      goto out;
  }
  /* buf now holds the right bytes for every range that failed. */
  r = 0;
  if (fix->n && !alone)
    r = 1;
  else if (fix->n) {
    array_run (a, fix);
    r = array_settle_repairs (a, fix);
  }
 out:
  array_unlock_units (a, first, last);
  io_batch_free (&b);
  return r;
}

/* The read op: each unit from one usable copy; a range that fails to
 * read is read from another copy and rewritten from it.  A write-mostly
 * copy is read only once the behind-writes over the range have landed
 * on it. */
static int
copies_read (struct raid_array *a, uint8_t *buf, uint64_t count,
             uint64_t offset)
{
  struct member_set bad = { { 0 } }, repair = { { 0 } };
  struct io_batch fix;
  int r;

  io_batch_init (&fix);
  r = read_held (a, buf, count, offset, false, &bad, &repair, &fix);
  if (r == 1)
    r = read_held (a, buf, count, offset, true, &bad, &repair, &fix);
  io_batch_free (&fix);
  return r;
}

/* Did every write of b work? */
static bool
all_written (const struct io_batch *b)
{
  size_t i;

  for (i = 0; i < b->n; i++)
    if (b->ops[i].err)
      return false;
  return true;
}

/* Write every copy in use (and a replacement being built).  With
 * write-behind, the write-mostly copies' writes are queued as a
 * behind-write (write-behind.h) and the write returns once the others
 * have it; unless one of those failed, or some unit had no other copy
 * to take it (the local one failed, or is rebuilt only below it), for
 * then the behind-write may hold the only copy: it is waited for. */
static int
copies_write (struct raid_array *a, const uint8_t *buf, uint64_t count,
              uint64_t offset)
{
  const struct raid_geometry *g = &a->geo;
  struct place places[RAID_MAX_MEMBERS];
  uint64_t first = offset / g->unit_bytes;
  uint64_t last = (offset + count - 1) / g->unit_bytes, done = 0, seq = 0;
  struct member_set none = { { 0 } };
  struct members_view v;
  struct behind_write *w = NULL;
  struct range_held held;
  struct io_batch b;
  bool uncovered = false;       /* a unit only a write-mostly copy takes */
  int r = -1;

  io_batch_init (&b);
  /* Shared: the jobs that copy units hold them alone; among writes,
   * only overlapping ones wait (range-lock.h). */
  array_lock_units (a, first, last, false);
  range_lock (&a->write_ranges, &held, offset, count);
  array_view (a, &v);
  if (behind_on (a) && !(w = behind_prepare (a, buf, offset, count)))
    goto out;
  while (done < count) {
    uint64_t at = offset + done;
    uint64_t unit = at / g->unit_bytes, within = at % g->unit_bytes;
    uint64_t len = g->unit_bytes - within;
    unsigned n = geometry_unit_places (g, unit, places), i, now = 0;

    if (len > count - done)
      len = count - done;
    for (i = 0; i < n; i++) {
      bool behind = w && copies_write_mostly (a, &places[i]);
      if (!copies_place_usable (a, &v, &none, &places[i], within + len))
        continue;
      if (view_add_write (&v, behind ? &w->batch : &b,
                          buf ? IO_WRITE : IO_ZERO, places[i].disk,
                          places[i].member_unit * g->unit_bytes + within, len,
                          behind ? behind_data (w, done)
                          : buf ? (void *) (buf + done) : NULL))
        goto out;
      now += !behind;
    }
    uncovered |= now == 0;
    done += len;
  }
  if (w) {
    seq = behind_queue (a, w);
    w = NULL;
  }
  array_run (a, &b);
  r = array_settle_writes (a, &b);
  if (seq && (uncovered || !all_written (&b))) {
    behind_wait_upto (a, seq);
    r = array_check_alive (a);
  }
 out:
  range_unlock (&a->write_ranges, &held);
  array_unlock_units (a, first, last);
  behind_discard (w);
  io_batch_free (&b);
  return r;
}

/* The first copy in use that is not write-mostly, else the first in
 * use (or the last, if none is).  A write-mostly copy may lag behind
 * (write-behind): it could call a hole what the others hold. */
static void
copies_locate (const struct raid_array *a, uint64_t unit, unsigned *member,
               uint64_t *member_off)
{
  struct place places[RAID_MAX_MEMBERS];
  unsigned n = geometry_unit_places (&a->geo, unit, places), i, pick = n;

  for (i = 0; i < n; i++)
    if (slot_state (&a->slots[places[i].disk]) == SLOT_ACTIVE) {
      if (!copies_write_mostly (a, &places[i])) {
        pick = i;
        break;
      }
      if (pick == n)
        pick = i;
    }
  if (pick == n)
    pick = n - 1;
  *member = places[pick].disk;
  *member_off = places[pick].member_unit * a->geo.unit_bytes;
}

/* The read_slow op: what the read latency rule judged (RAID0, with no
 * copies to choose from, has no rule). */
static bool
copies_read_slow (const struct raid_array *a, unsigned m)
{
  return a->level_state && read_latency_slow (a->level_state, m);
}

const struct raid_level_ops copies_level_ops = {
  .setup = copies_setup,
  .teardown = copies_teardown,
  .lock_key = copies_lock_key,
  .read = copies_read,
  .write = copies_write,
  .locate = copies_locate,
  .sync_units = copies_sync_units,
  .sync = copies_sync,
  .sync_unit_of = copies_sync_unit_of,
  .reconstruct = copies_reconstruct,
  .unwritten = copies_unwritten,
  .member_keys = copies_member_keys,
  .check = copies_check,
  .read_slow = copies_read_slow,
};
