/* nbdraid: reads and writes for the copies family (RAID0, RAID1, RAID10).
 *
 * Every array unit lives in one or more places; a write goes to all of
 * them that are in use, a read to the fastest, least busy one (see
 * read-latency.c for which copies are slow).  No parity, so
 * zeroing is a member zero (hole punch) on every copy.  Where a read
 * fails, the other copies are read instead and the failed range is
 * rewritten from them (md's read-error repair).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "levels.h"
#include "parity.h"
#include "read-latency.h"

/* Bytes of units handled per sync, check or rebuild round: big enough
 * for sequential member I/O, small enough to bound memory. */
#define WINDOW_BYTES (8 * 1024 * 1024)

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

/* Units in the array, the last one perhaps short (RAID1). */
static uint64_t
array_units (const struct raid_array *a)
{
  return (a->geo.array_bytes + a->geo.unit_bytes - 1) / a->geo.unit_bytes;
}

/* Bytes of unit u (the last one may be short, for RAID1). */
static uint64_t
unit_len (const struct raid_array *a, uint64_t u)
{
  uint64_t left = a->geo.array_bytes - u * a->geo.unit_bytes;
  return left < a->geo.unit_bytes ? left : a->geo.unit_bytes;
}

/* May copy p serve bytes up to end_within of its unit: its member not
 * in bad, and usable that far into its data area? */
static bool
place_usable (const struct raid_array *a, const struct members_view *v,
              const struct member_set *bad, const struct place *p,
              uint64_t end_within)
{
  return !member_set_has (bad, p->disk) &&
    view_usable (v, p->disk, p->member_unit * a->geo.unit_bytes + end_within);
}

/* A write-mostly copy (md's WriteMostly1, a far mirror): read only when
 * no other copy can serve. */
static bool
write_mostly (const struct raid_array *a, const struct place *p)
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
  if (write_mostly (a, p))
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
static const struct place *
sync_source (const struct raid_array *a, const struct members_view *v,
             const struct member_set *bad, const struct place *places,
             unsigned n, uint64_t end_within)
{
  const struct place *wm = NULL;
  unsigned c;

  for (c = 0; c < n; c++)
    if (place_usable (a, v, bad, &places[c], end_within)) {
      if (!write_mostly (a, &places[c]))
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
      (best = sync_source (a, v, bad, places, n, end_within)))
    return best;
  for (i = 0; i < n; i++)
    if (rp->load[places[i].disk] > 0
        && places[i].member_unit == rp->next[places[i].disk]
        && read_rank (a, rp, &places[i]) <= 1
        && place_usable (a, v, bad, &places[i], end_within))
      return &places[i];
  for (i = 0; i < n; i++) {
    const struct place *p = &places[(rp->turn + i) % n];
    if (!place_usable (a, v, bad, p, end_within))
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
      bool behind = w && write_mostly (a, &places[i]);
      if (!place_usable (a, &v, &none, &places[i], within + len))
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
      if (!write_mostly (a, &places[i])) {
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

/* The copies family resyncs by unit: the unit holding offset. */
static uint64_t
copies_sync_unit_of (const struct raid_array *a, uint64_t offset)
{
  return offset / a->geo.unit_bytes;
}

/* The copies family resyncs every unit of the array. */
static uint64_t
copies_sync_units (const struct raid_array *a)
{
  return array_units (a);
}

/* The copy of unit places[] a round reads first and copies over the
 * others (sync_source), or n if none. */
static unsigned
first_usable (const struct raid_array *a, const struct members_view *v,
              const struct place *places, unsigned n, uint64_t len)
{
  struct member_set none = { { 0 } };
  const struct place *p = sync_source (a, v, &none, places, n, len);

  return p ? (unsigned) (p - places) : n;
}

/* Are all copies of a unit in holes, on members all in use?  Then they
 * agree (zeros): resync and check pass the unit by, and sparse members
 * stay sparse. */
static bool
unit_in_holes (struct raid_array *a, const struct place *places,
               unsigned n, uint64_t len)
{
  unsigned c;

  for (c = 0; c < n; c++)
    if (slot_state (&a->slots[places[c].disk]) != SLOT_ACTIVE ||
        !array_member_hole (a, places[c].disk,
                            places[c].member_unit * a->geo.unit_bytes, len))
      return false;
  return true;
}

/* Check one page of unit u, plen bytes at p into it and at off in each
 * copy's buffer, across its usable copies (use): count the sectors of
 * every copy that differs from the reference and with repair rewrite
 * them.  The reference is the value more than half the copies hold
 * (three copies outvote a bad one, which is named); without such a
 * majority it is the first copy, md's way, and the copies that
 * disagree are named together. */
static int
check_page (struct raid_array *a, const struct members_view *v, uint64_t u,
            const struct place *use, uint8_t *const *buf, unsigned nuse,
            uint64_t off, uint64_t p, uint64_t plen, bool repair,
            uint64_t *mismatches, struct io_batch *writes)
{
  const uint64_t sectors = (plen + 511) / 512;
  unsigned c, d, votes, best = 0, best_votes = 0;
  struct member_set suspects = { { 0 } };
  bool majority;

  for (c = 1; c < nuse && !memcmp (buf[0] + off, buf[c] + off, plen); c++)
    ;
  if (c == nuse)
    return 0;                   /* all agree */
  for (c = 0; c < nuse; c++) {
    for (votes = 0, d = 0; d < nuse; d++)
      votes += !memcmp (buf[c] + off, buf[d] + off, plen);
    if (votes > best_votes) {
      best = c;
      best_votes = votes;
    }
  }
  majority = 2 * best_votes > nuse;
  if (!majority)
    best = 0;
  for (c = 0; c < nuse; c++) {
    if (!memcmp (buf[best] + off, buf[c] + off, plen))
      continue;
    *mismatches += sectors;
    member_set_add (&suspects, use[c].disk);
    if (majority)
      array_note_mismatch (a, u, (int) use[c].disk, NULL, sectors);
    if (repair &&
        view_add_write (v, writes, IO_WRITE, use[c].disk,
                        use[c].member_unit * a->geo.unit_bytes + p, plen,
                        buf[best] + off))
      return -1;
  }
  if (!majority) {
    member_set_add (&suspects, use[0].disk);
    array_note_mismatch (a, u, -1, &suspects, sectors);
  }
  return 0;
}

/* One round of resync or check over units [u, u+n): with sync, the
 * first usable copy of each unit is written over the others; with
 * check, every usable copy is read and compared page by page
 * (check_page).  *done counts the units not in holes. */
static int
copies_round (struct raid_array *a, uint64_t u, uint64_t n, bool sync,
              bool repair, uint64_t *mismatches, uint64_t *done)
{
  const struct raid_geometry *g = &a->geo;
  struct place places[RAID_MAX_MEMBERS], use[RAID_MAX_MEMBERS];
  struct member_set none = { { 0 } };
  struct members_view v;
  struct io_batch reads, writes;
  uint8_t *buf, *bufs[RAID_MAX_MEMBERS], *ubuf[RAID_MAX_MEMBERS];
  bool *in_holes = calloc (n, sizeof *in_holes);
  uint64_t i;
  unsigned c, src, np, nuse;
  int r = -1;

  buf = parity_buffers_alloc (g->copies, n * g->unit_bytes, a->direct, 0,
                              bufs);
  if (!buf || !in_holes) {
    parity_buffers_free (buf);
    free (in_holes);
    errno = ENOMEM;
    return -1;
  }
  io_batch_init (&reads);
  io_batch_init (&writes);
  array_lock_units (a, u, u + n - 1, true);
  array_view (a, &v);
  /* The write-mostly copies must hold what the others hold. */
  behind_wait_range (a, u * g->unit_bytes, n * g->unit_bytes);
  for (i = 0; i < n; i++) {
    uint64_t len = unit_len (a, u + i), off = i * g->unit_bytes;

    np = geometry_unit_places (g, u + i, places);
    in_holes[i] = unit_in_holes (a, places, np, len);
    if (in_holes[i])
      continue;
    ++*done;
    src = first_usable (a, &v, places, np, len);
    for (c = 0; c < np; c++)
      if ((c == src || !sync) &&
          place_usable (a, &v, &none, &places[c], len) &&
          io_batch_add (&reads, IO_READ, places[c].disk,
                        places[c].member_unit * g->unit_bytes, len,
                        bufs[c] + off))
        goto out;
  }
  if (array_run (a, &reads)) {
    errno = EIO;
    goto out;
  }
  for (i = 0; i < n; i++) {
    uint64_t len = unit_len (a, u + i), off = i * g->unit_bytes, p;

    if (in_holes[i])
      continue;
    np = geometry_unit_places (g, u + i, places);
    src = first_usable (a, &v, places, np, len);
    /* The source first: the others are compared with it or copied
     * from it. */
    nuse = 0;
    if (src < np) {
      use[nuse] = places[src];
      ubuf[nuse++] = bufs[src];
    }
    for (c = 0; c < np; c++)
      if (c != src && place_usable (a, &v, &none, &places[c], len)) {
        use[nuse] = places[c];
        ubuf[nuse++] = bufs[c];
      }
    for (c = 1; sync && c < nuse; c++)
      if (view_add_write (&v, &writes, IO_WRITE, use[c].disk,
                          use[c].member_unit * g->unit_bytes, len,
                          ubuf[0] + off))
        goto out;
    for (p = 0; !sync && p < len; p += 4096)
      if (check_page (a, &v, u + i, use, ubuf, nuse, off + p, p,
                      len - p < 4096 ? len - p : 4096, repair, mismatches,
                      &writes))
        goto out;
  }
  array_run (a, &writes);
  r = array_settle_writes (a, &writes);
 out:
  array_unlock_units (a, u, u + n - 1);
  io_batch_free (&reads);
  io_batch_free (&writes);
  parity_buffers_free (buf);
  free (in_holes);
  return r;
}

/* Units per resync or check round: WINDOW_BYTES of all their copies, at
 * least one. */
static uint64_t
window_units (const struct raid_array *a)
{
  uint64_t w = WINDOW_BYTES / a->geo.unit_bytes / a->geo.copies;
  return w ? w : 1;
}

/* The sync op: copy the first usable copy of each unit over the others,
 * a window of units at a time. */
static int
copies_sync (struct raid_array *a, uint64_t first, uint64_t n,
             uint64_t *done)
{
  uint64_t u, w, ignored = 0;

  *done = 0;
  for (u = first; u < first + n; u += w) {
    w = first + n - u < window_units (a) ? first + n - u : window_units (a);
    if (copies_round (a, u, w, true, false, &ignored, done))
      return -1;
  }
  return 0;
}

/* The check op: compare every usable copy with the first (and with
 * repair, rewrite those that differ), a window at a time. */
static int
copies_check (struct raid_array *a, uint64_t first, uint64_t n, bool repair,
              uint64_t *mismatches)
{
  uint64_t u, w, examined = 0;

  for (u = first; u < first + n; u += w) {
    w = first + n - u < window_units (a) ? first + n - u : window_units (a);
    if (copies_round (a, u, w, false, repair, mismatches, &examined))
      return -1;
  }
  return 0;
}

/* The copy member m's unit mu is rebuilt from, for its bytes up to
 * end_within: another usable one.  NULL if no copy is left. */
static const struct place *
rebuild_source (const struct raid_array *a, const struct members_view *v,
                const struct member_set *gone, unsigned m, uint64_t unit,
                uint64_t end_within, struct place *places)
{
  unsigned n = geometry_unit_places (&a->geo, unit, places), i;

  for (i = 0; i < n; i++)
    if (places[i].disk != m && place_usable (a, v, gone, &places[i],
                                             end_within))
      return &places[i];
  return NULL;
}

/* Call fn for each unit-sized piece [lo, hi) of member m's range
 * [off, off+len), with the place it is rebuilt from (NULL for space
 * that holds no unit: it reads as zeros); stop at the first that
 * does not return 0. */
static int
each_source (struct raid_array *a, unsigned m, uint64_t off, uint64_t len,
             const struct member_set *gone,
             int (*fn) (struct raid_array *a, const struct place *from,
                        uint64_t lo, uint64_t hi, uint64_t within,
                        void *opaque),
             void *opaque)
{
  const struct raid_geometry *g = &a->geo;
  struct place places[RAID_MAX_MEMBERS];
  const struct place *from;
  struct members_view v;
  uint64_t mu, unit;
  int r = 0;

  array_view (a, &v);
  for (mu = off / g->unit_bytes;
       r == 0 && mu <= (off + len - 1) / g->unit_bytes; mu++) {
    uint64_t lo = mu * g->unit_bytes > off ? mu * g->unit_bytes : off;
    uint64_t hi = (mu + 1) * g->unit_bytes < off + len
      ? (mu + 1) * g->unit_bytes : off + len;

    from = NULL;
    if (geometry_unit_at (g, m, mu, &unit)) {
      from = rebuild_source (a, &v, gone, m, unit, hi - mu * g->unit_bytes,
                             places);
      if (!from) {
        errno = EIO;            /* no copy left to rebuild it from */
        return -1;
      }
    }
    r = fn (a, from, lo, hi, lo - mu * g->unit_bytes, opaque);
  }
  return r;
}

struct rebuild_reads {
  uint64_t off;
  uint8_t *out;
  struct io_batch b;
};

/* each_source's fn for reconstruct: add a read of the piece from its
 * source copy into out, or zero it where no unit lives. */
static int
add_source_read (struct raid_array *a, const struct place *from,
                 uint64_t lo, uint64_t hi, uint64_t within, void *opaque)
{
  struct rebuild_reads *r = opaque;

  if (!from) {
    memset (r->out + (lo - r->off), 0, hi - lo);
    return 0;
  }
  return io_batch_add (&r->b, IO_READ, from->disk,
                       from->member_unit * a->geo.unit_bytes + within,
                       hi - lo, r->out + (lo - r->off));
}

/* What member m should hold at [off, off+len): each of its units read
 * from another copy; space that holds no unit reads as zeros. */
static int
copies_reconstruct (struct raid_array *a, unsigned m, uint64_t off,
                    uint64_t len, const struct member_set *gone,
                    uint8_t *out, struct scratch *scratch)
{
  struct rebuild_reads r = { .off = off, .out = out };
  int ret = -1;

  /* A write-mostly source must hold what the others hold. */
  behind_drain (a);
  io_batch_init (&r.b);
  if (each_source (a, m, off, len, gone, add_source_read, &r))
    goto out;
  if (array_run (a, &r.b)) {
    errno = EIO;
    goto out;
  }
  ret = 0;
 out:
  io_batch_free (&r.b);
  return ret;
}

/* 0 (go on) while the sources are holes, 1 at the first that is not. */
static int
source_hole (struct raid_array *a, const struct place *from, uint64_t lo,
             uint64_t hi, uint64_t within, void *opaque)
{
  return from && !array_member_hole (a, from->disk, from->member_unit *
                                     a->geo.unit_bytes + within, hi - lo);
}

/* Where no copy is left, reconstruct will say so. */
static bool
copies_unwritten (struct raid_array *a, unsigned m, uint64_t off,
                  uint64_t len, const struct member_set *gone)
{
  return each_source (a, m, off, len, gone, source_hole, NULL) == 0;
}

/* The lock keys of member m's units first..last: the array units they
 * hold (space that holds none has no key). */
static void
copies_member_keys (const struct raid_array *a, unsigned m, uint64_t first,
                    uint64_t last, void (*fn) (void *, uint64_t),
                    void *opaque)
{
  uint64_t mu, unit;

  for (mu = first; mu <= last; mu++)
    if (geometry_unit_at (&a->geo, m, mu, &unit))
      fn (opaque, unit);
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
