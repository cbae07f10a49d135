/* nbdraid: the client's requests: their checks and counters, the gate
 * a level change closes, read-ahead, and the verbs themselves. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "clock.h"

/* Requests must lie inside the array; nbdkit checks this too, the
 * engine does not rely on it. */
static int
check_range (const struct raid_array *a, uint64_t count, uint64_t offset)
{
  if (count == 0 || offset >= raid_size (a) || count > raid_size (a) - offset) {
    errno = count == 0 ? EINVAL : ENOSPC;
    return -1;
  }
  return 0;
}

/* Count a request as it starts, in *n and its bytes in *bytes; its
 * start time, for request_end.  Relaxed atomics: every client thread
 * passes here, and the counters need no order with anything else. */
static uint64_t
request_start (uint64_t *n, uint64_t *bytes, uint64_t count)
{
  __atomic_add_fetch (n, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch (bytes, count, __ATOMIC_RELAXED);
  return now_ns ();
}

/* Add a request's time, and its failure, to the counters; returns r. */
static int
request_end (struct raid_array *a, uint64_t started_ns, int r)
{
  __atomic_add_fetch (&a->requests.busy_ns, now_ns () - started_ns,
                      __ATOMIC_RELAXED);
  if (r == -1)
    __atomic_add_fetch (&a->requests.failed, 1, __ATOMIC_RELAXED);
  return r;
}

void
array_requests (const struct raid_array *a, struct raid_requests *out)
{
  const struct raid_requests *rq = &a->requests;

  out->reads = __atomic_load_n (&rq->reads, __ATOMIC_RELAXED);
  out->read_bytes = __atomic_load_n (&rq->read_bytes, __ATOMIC_RELAXED);
  out->writes = __atomic_load_n (&rq->writes, __ATOMIC_RELAXED);
  out->write_bytes = __atomic_load_n (&rq->write_bytes, __ATOMIC_RELAXED);
  out->zeroes = __atomic_load_n (&rq->zeroes, __ATOMIC_RELAXED);
  out->zero_bytes = __atomic_load_n (&rq->zero_bytes, __ATOMIC_RELAXED);
  out->failed = __atomic_load_n (&rq->failed, __ATOMIC_RELAXED);
  out->busy_ns = __atomic_load_n (&rq->busy_ns, __ATOMIC_RELAXED);
  out->read_ahead_hits = __atomic_load_n (&a->ra.hits, __ATOMIC_RELAXED);
  out->read_ahead_bytes = __atomic_load_n (&a->ra.fill_bytes,
                                           __ATOMIC_RELAXED);
}

/* Every request the engine serves passes this gate: a level change
 * (nbdraid grow --level) swaps the request paths and the geometry
 * with no request inside, and new ones wait at the gate meanwhile. */
static bool
request_try_enter (struct raid_array *a)
{
  /* Counted before hold_requests is looked at, as array_start_write
   * does: array_hold_requests sets it before it counts us. */
  __atomic_add_fetch (&a->requests_in_flight, 1, __ATOMIC_SEQ_CST);
  if (!__atomic_load_n (&a->hold_requests, __ATOMIC_SEQ_CST))
    return true;
  __atomic_sub_fetch (&a->requests_in_flight, 1, __ATOMIC_SEQ_CST);
  return false;
}

static void
request_enter (struct raid_array *a)
{
  const struct timespec ms = { 0, 1000000 };

  while (!request_try_enter (a))
    while (__atomic_load_n (&a->hold_requests, __ATOMIC_SEQ_CST))
      nanosleep (&ms, NULL);
}

static void
request_leave (struct raid_array *a)
{
  __atomic_sub_fetch (&a->requests_in_flight, 1, __ATOMIC_SEQ_CST);
}

void
array_hold_requests (struct raid_array *a)
{
  const struct timespec ms = { 0, 1000000 };

  __atomic_store_n (&a->hold_requests, true, __ATOMIC_SEQ_CST);
  while (__atomic_load_n (&a->requests_in_flight, __ATOMIC_SEQ_CST))
    nanosleep (&ms, NULL);
}

void
array_release_requests (struct raid_array *a)
{
  __atomic_store_n (&a->hold_requests, false, __ATOMIC_SEQ_CST);
}

/* The level's read, or the reshape's while one runs. */
static int
level_read (struct raid_array *a, void *buf, uint64_t count, uint64_t offset)
{
  return a->reshape.active ? reshape_read (a, buf, count, offset)
                           : a->ops->read (a, buf, count, offset);
}

/* read_ahead_fill_fn: read a window.  A reader filling its own is
 * inside the gate already; a fill thread enters it as a reader would,
 * but gives up rather than waits at it: a reader inside may be waiting
 * for this window, and a level change for that reader. */
static int
read_window (void *ctx, void *buf, uint64_t len, uint64_t off,
             bool background)
{
  struct raid_array *a = ctx;
  unsigned ticket;
  int r;

  if (!background)
    return level_read (a, buf, len, off);
  if (!request_try_enter (a))
    return -1;
  ticket = retired_enter (&a->retired);
  r = array_check_alive (a) ? -1 : level_read (a, buf, len, off);
  retired_exit (&a->retired, ticket);
  request_leave (a);
  return r;
}

/* Read-ahead windows: whole turns of the parity's rotation where they
 * fit in WINDOW_MAX (a member then reads its run of data chunks
 * between its parity chunks in one piece), else whole stripes, else
 * whole chunks: a 16-member array's stripe of 7.5 MiB made windows so
 * large that a dozen readers' own ones did not fit in the memory. */
#define WINDOW_MAX (4 * 1024 * 1024)
static uint64_t
window_bytes (const struct raid_array *a)
{
  const uint64_t unit = a->geo.unit_bytes;
  const uint64_t stripe = unit * a->geo.data_members;
  const uint64_t turn = stripe * a->geo.members;

  if (turn <= WINDOW_MAX)
    return turn * (WINDOW_MAX / turn);
  if (stripe <= WINDOW_MAX)
    return stripe * (WINDOW_MAX / stripe);
  return unit <= WINDOW_MAX ? unit * (WINDOW_MAX / unit) : unit;
}

/* The config's read-ahead, or the default where a member waits on a
 * device or the network: RAID_READ_AHEAD_BYTES, or two stripes if
 * more (md sets a RAID5's read-ahead to two stripes at least: a wide
 * array's stream then keeps every member busy); none where every
 * member is the page cache's, which reads ahead itself (a window
 * would be a copy more). */
static uint64_t
read_ahead_bytes (const struct raid_array *a)
{
  const uint64_t stripes = 2 * a->geo.unit_bytes * a->geo.data_members;
  unsigned i;

  if (a->read_ahead_bytes != RAID_READ_AHEAD_AUTO)
    return a->read_ahead_bytes;
  for (i = 0; i < a->geo.members; i++)
    if (a->slots[i].io && array_member_waits (a->slots[i].io))
      return stripes > RAID_READ_AHEAD_BYTES ? stripes
                                             : RAID_READ_AHEAD_BYTES;
  return 0;
}

/* Windows in memory at most, over all streams: a dozen readers' own. */
#define READ_AHEAD_MEMORY (96 * 1024 * 1024)

int
array_read_ahead_start (struct raid_array *a)
{
  if (read_ahead_init (&a->ra, window_bytes (a), read_ahead_bytes (a),
                       READ_AHEAD_MEMORY, read_window, a) == -1)
    return -1;
  if (read_ahead_start (&a->ra) == -1) {
    read_ahead_free (&a->ra);
    return -1;
  }
  return 0;
}

/* Read data through the level, counted as client I/O (which background
 * work yields to); a sequential reader's from the read-ahead windows. */
int
raid_read (struct raid_array *a, void *buf, uint64_t count, uint64_t offset)
{
  uint64_t started_ns, reading;
  unsigned ticket;
  int r;

  if (check_range (a, count, offset) || array_check_alive (a))
    return -1;
  started_ns = request_start (&a->requests.reads, &a->requests.read_bytes,
                              count);
  request_enter (a);
  ticket = retired_enter (&a->retired);
  reading = __atomic_add_fetch (&a->reading_bytes, count, __ATOMIC_RELAXED);
  r = read_ahead_serve (&a->ra, buf, count, offset, raid_size (a), reading)
    ? 0 : level_read (a, buf, count, offset);
  __atomic_sub_fetch (&a->reading_bytes, count, __ATOMIC_RELAXED);
  retired_exit (&a->retired, ticket);
  request_leave (a);
  return request_end (a, started_ns, r);
}

/* Every write: checks, the dirty marks, the level's write, FUA. */
static int
write_or_zero (struct raid_array *a, const void *buf, uint64_t count,
               uint64_t offset, bool fua)
{
  uint64_t first, last, started_ns;
  unsigned ticket;
  int r;

  if (check_range (a, count, offset) || array_check_alive (a))
    return -1;
  /* Refused before it is counted; array_start_write, which counts the
   * writes in flight, catches one made read-only meanwhile. */
  if (__atomic_load_n (&a->refuse_writes, __ATOMIC_ACQUIRE)) {
    errno = EROFS;
    return -1;
  }
  started_ns = buf
    ? request_start (&a->requests.writes, &a->requests.write_bytes, count)
    : request_start (&a->requests.zeroes, &a->requests.zero_bytes, count);
  request_enter (a);
  if (a->reshape.active)
    reshape_sync_units (a, offset, count, &first, &last);
  else {
    first = a->ops->sync_unit_of (a, offset);
    last = a->ops->sync_unit_of (a, offset + count - 1);
  }
  ticket = retired_enter (&a->retired);
  /* Before the members change and once they have (read-ahead.h). */
  read_ahead_forget (&a->ra, count, offset);
  r = array_start_write (a, first, last);
  if (r == 0) {
    r = a->reshape.active ? reshape_write (a, buf, count, offset)
                          : a->ops->write (a, buf, count, offset);
    if (r == 0 && fua)
      r = array_flush (a);
    array_end_write (a, first, last);
  }
  read_ahead_forget (&a->ra, count, offset);
  retired_exit (&a->retired, ticket);
  request_leave (a);
  return request_end (a, started_ns, r);
}

/* Write data; with fua, the members are flushed before it returns. */
int
raid_write (struct raid_array *a, const void *buf, uint64_t count,
            uint64_t offset, bool fua)
{
  return write_or_zero (a, buf, count, offset, fua);
}

int
raid_zero (struct raid_array *a, uint64_t count, uint64_t offset, bool fua)
{
  return write_or_zero (a, NULL, count, offset, fua);
}

/* Flush every device that holds data: the active roles and any device
 * being rebuilt, once the behind-writes made so far have landed on the
 * write-mostly copies.  A member whose flush fails is failed. */
int
raid_flush (struct raid_array *a)
{
  int r;

  request_enter (a);
  r = array_flush (a);
  request_leave (a);
  return r;
}

/* At most this many units are examined per call; the client asks again
 * for the rest. */
#define EXTENT_UNITS_PER_CALL 4096

/* Ask each unit's member whether it is a hole and report runs of the
 * same kind to fn, up to EXTENT_UNITS_PER_CALL units. */
static int
extents (struct raid_array *a, uint64_t count, uint64_t offset,
         raid_extent_fn fn, void *opaque)
{
  const uint64_t U = a->geo.unit_bytes;
  uint64_t run_start = offset, run_len = 0, units = 0;
  struct member_set mute = { { 0 } };
  bool run_hole = false;

  while (count > 0 && units++ < EXTENT_UNITS_PER_CALL) {
    uint64_t within = offset % U, len = U - within, moff;
    struct member *m;
    unsigned member;
    int hole;

    if (len > count)
      len = count;
    /* A unit whose member is gone may hold data: say so.  So may one
     * whose write-mostly copy has writes still behind over it, or whose
     * stripe has writes in the write-back cache. */
    a->ops->locate (a, offset / U, &member, &moff);
    m = a->slots[member].io;
    hole = slot_state (&a->slots[member]) != SLOT_ACTIVE ||
      member_set_has (&mute, member) ||
      ((a->slots[member].sb.devflags & RAID_DEVFLAG_WRITE_MOSTLY) &&
       behind_pending (a, offset, len)) ||
      (a->journal.cache.on &&
       journal_cache_holds (&a->journal.cache,
                            offset / a->journal.cache.stripe_bytes)) ? 0
      : m->ops->is_hole (m, len,
                         a->slots[member].data_offset_bytes + moff + within);
    /* A member that cannot say has data there, and is not asked again
     * in this call (an NBD member that is down takes its timeout to
     * say so): the client reads it, and meets the error if any. */
    if (hole == -1) {
      array_log (a, RAID_LOG_ERROR, "array %s: member %u (%s): block "
                 "status at %" PRIu64 ": %s", a->name, member, m->name,
                 a->slots[member].data_offset_bytes + moff + within,
                 strerror (errno));
      member_set_add (&mute, member);
      hole = 0;
    }
    if (run_len > 0 && (bool) hole != run_hole) {
      if (fn (opaque, run_start, run_len, run_hole) == -1)
        return -1;
      run_start = offset;
      run_len = 0;
    }
    run_hole = hole;
    run_len += len;
    offset += len;
    count -= len;
  }
  return fn (opaque, run_start, run_len, run_hole);
}

int
raid_extents (struct raid_array *a, uint64_t count, uint64_t offset,
              raid_extent_fn fn, void *opaque)
{
  unsigned ticket;
  int r;

  if (check_range (a, count, offset))
    return -1;
  request_enter (a);
  ticket = retired_enter (&a->retired);
  /* A reshape moves the data: every byte may hold some. */
  r = a->reshape.active ? fn (opaque, offset, count, false)
                        : extents (a, count, offset, fn, opaque);
  retired_exit (&a->retired, ticket);
  request_leave (a);
  return r;
}
