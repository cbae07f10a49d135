/* nbdraid: the reshape job: md's grow of a RAID5 or RAID6 onto more
 * members without a backup file.  Window by window, whole new stripes are read
 * from the old geometry and written in the new one, each role's data
 * area starting `delta` bytes before the old one (md's new_offset);
 * the superblocks' reshape_position says how far it got, so that a
 * server killed anywhere resumes with no data lost.
 *
 * md's critical section: the window being written must never hold the
 * only copy of data not yet moved.  Moving the data offset back makes
 * that hold by construction, as long as the window stays below where
 * the superblocks say unmoved data starts.  After a crash the job
 * resumes at reshape_position (the stripe `safe`), and reads the data
 * of array addresses from safe * S (S, the bytes of a new stripe; D
 * and D' the old and new data members, C the chunk) in the old
 * geometry: it lies in old stripes floor(safe * D' / D) and up, that
 * is at byte data_offset + floor(safe * D' / D) * C of each role and
 * above.  New stripe s is written at data_offset - delta + s * C.  So
 * a window ending at new stripe e overwrites none of it while
 *     e * C - delta <= floor(safe * D' / D) * C,
 * the limit below.  With D' > D it grows faster than the front moves
 * (a third of a stripe per stripe for 3 -> 4 data members): the
 * superblocks need writing before a window only every so often, and
 * delta >= C lets the first window (safe = 0) write a stripe.  The
 * new role holds no old data and needs no such care.
 *
 * A shrink (md's backwards reshape) is the mirror image: the job runs
 * from the end of the smaller array down, the data area moves up by
 * delta, and the old geometry's data still to move lies below
 * byte ceil(safe * D' / D) * C of each role; a window starting at new
 * stripe b, written from byte delta + b * C up, overwrites none of it
 * while
 *     b * C + delta >= ceil(safe * D' / D) * C,
 * the floor below.  With D' < D it falls faster than the front.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "job.h"

/* A window's data is read whole before it is written: at most this
 * much of the array at a time. */
#define WINDOW_BYTES (16 * 1024 * 1024)

/* New stripes in all: the reshape covers the whole new array (each
 * role's whole data area), the new space past the old data written as
 * zeros with its parity, as md does, so the grown array is in sync. */
static uint64_t
total_stripes (const struct raid_array *a)
{
  return a->reshape.new_bytes / reshape_stripe_bytes (a);
}

/* New stripes in a unit of the job: windows and checkpoints start and
 * end on these boundaries, md's reshape_position being a multiple of
 * the larger chunk's stripe (raid5_run refuses others). */
static uint64_t
unit_stripes (const struct raid_array *a)
{
  const uint64_t C = a->geo.chunk_bytes, C0 = a->reshape.old.chunk_bytes;

  return C0 > C ? C0 / C : 1;
}

/* The new stripe a window may end at, from where the superblocks say
 * the front is (see the top of this file), on a unit boundary: the
 * last whose new stripes below it end, moved back by delta, where the
 * old data not moved yet begins.  (A search: RAID10's rows are no
 * simple multiple of its stripes.) */
static uint64_t
window_limit (const struct raid_array *a)
{
  const struct raid_reshape *r = &a->reshape;
  const uint64_t S = reshape_stripe_bytes (a), u = unit_stripes (a);
  const uint64_t reach = reshape_first_byte (a, false, r->safe * S) + r->delta;
  uint64_t lo = r->front / u, hi = total_stripes (a) / u + 1;

  /* The last unit e (lo <= e < hi) whose stripes end within reach. */
  if (reshape_end_byte (a, true, lo * u * S) > reach)
    return lo * u;
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (reshape_end_byte (a, true, mid * u * S) <= reach)
      lo = mid;
    else
      hi = mid;
  }
  return lo * u;
}

/* The new stripe a backwards window may start at, from where the
 * superblocks say the front is (see the top of this file), on a unit
 * boundary: the first whose new stripes from it on start, moved up by
 * delta, past the end of the old data not moved yet. */
static uint64_t
window_floor (const struct raid_array *a)
{
  const struct raid_reshape *r = &a->reshape;
  const uint64_t S = reshape_stripe_bytes (a), u = unit_stripes (a);
  const uint64_t reach = reshape_end_byte (a, false, r->safe * S);
  uint64_t lo = 0, hi = r->front / u;

  /* The first unit b (lo <= b <= hi) whose stripes start past reach. */
  if (reshape_first_byte (a, true, hi * u * S) + r->delta < reach)
    return hi * u;
  while (hi > lo) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (reshape_first_byte (a, true, mid * u * S) + r->delta >= reach)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo * u;
}

/* New stripes moved so far, for the job's progress. */
static uint64_t
moved_stripes (const struct raid_array *a)
{
  uint64_t front = __atomic_load_n (&a->reshape.front, __ATOMIC_ACQUIRE);

  return a->reshape.backwards ? total_stripes (a) - front : front;
}

int
reshape_checkpoint (struct raid_array *a)
{
  struct raid_reshape *r = &a->reshape;
  uint64_t front = __atomic_load_n (&r->front, __ATOMIC_ACQUIRE);
  unsigned i;
  int rc;

  if (front == r->safe)
    return 0;
  /* The new stripes are on the members before the superblocks say so. */
  if (array_flush (a) == -1)
    return -1;
  pthread_mutex_lock (&a->sb_lock);
  for (i = 0; i < a->geo.members + a->nspares; i++)
    array_slot (a, i)->sb.reshape_position
        = front * reshape_stripe_bytes (a) / 512;
  rc = array_write_superblocks_locked (a);
  pthread_mutex_unlock (&a->sb_lock);
  if (rc == 0)
    r->safe = front;
  return rc;
}

/* Clear the reshape from superblock sb: the new layout and chunk are
 * the array's (md's raid5_finish_reshape). */
static void
clear_fields (struct md_superblock *sb)
{
  if (sb->feature_map & MD_FEATURE_RESHAPE) {
    sb->layout = sb->new_layout;
    sb->chunk_sectors = sb->new_chunk;
  }
  sb->feature_map &= ~(MD_FEATURE_RESHAPE | MD_FEATURE_NEW_OFFSET);
  sb->reshape_position = 0;
  sb->delta_disks = 0;
  sb->new_offset = 0;
}

/* A RAID0 that grew through RAID4 is RAID0 again (mdadm's
 * impose_level after the reshape, md's raid0_takeover_raid45): the
 * missing parity role, the last, goes; each member gives the RAID4's
 * size, one zone (md sets every device's size to it). */
static void
raid0_again (struct raid_array *a)
{
  struct raid_geometry g = a->geo;
  char err[256];
  unsigned i;

  if (a->ops->teardown)
    a->ops->teardown (a);
  a->level_state = NULL;
  g.level = 0;
  g.layout = 0;
  g.members--;
  memset (&a->slots[g.members], 0, sizeof a->slots[g.members]);
  /* The RAID4's geometry was valid: so is the RAID0 of its data roles. */
  geometry_init (&g, err, sizeof err);
  a->geo = g;
  a->ops = a->level_ops (0);
  if (a->ops->setup && a->ops->setup (a, err, sizeof err) == -1)
    array_log (a, RAID_LOG_ERROR, "array %s: %s", a->name, err);
  a->resync_front = a->ops->sync_units (a);
  for (i = 0; i < a->geo.members + a->nspares; i++) {
    struct md_superblock *sb = &array_slot (a, i)->sb;
    sb->level = 0;
    sb->layout = 0;
    sb->new_level = 0;
    sb->new_layout = 0;
    sb->raid_disks = g.members;
    if (i < g.members)
      sb->data_size_sectors = g.member_bytes / 512;
  }
}

void
reshape_bitmap_follows (struct raid_array *a, uint64_t old_sync)
{
  char err[256];

  if (!a->bitmap.present || geometry_sync_bytes (&a->geo) == old_sync)
    return;
  if (bitmap_resize (a, geometry_sync_bytes (&a->geo), err, sizeof err) == -1)
    array_log (a, RAID_LOG_ERROR, "array %s: %s", a->name, err);
  else
    bitmap_write (a);
}

/* Device s's data starts by bytes later (earlier, negative) now. */
static void
move_offset (struct raid_slot *s, int64_t by)
{
  s->data_offset_bytes += (uint64_t)by;
  s->sb.data_offset_sectors = s->data_offset_bytes / 512;
  if (s->sb.data_size_sectors)
    s->sb.data_size_sectors -= (uint64_t)(by / 512);
  clear_fields (&s->sb);
}

/* The roles a shrink dropped are spares now, in every superblock (md's
 * raid5_finish_reshape, then remove_and_add_spares), but for a device
 * that failed. */
static void
dropped_roles_spare_in_superblocks (struct raid_array *a)
{
  unsigned k = reshape_leaving (a), i, j;

  for (i = 0; i < k; i++) {
    uint32_t dev = a->spares[i].sb.dev_number;
    if (slot_state (&a->spares[i]) != SLOT_ACTIVE)
      continue; /* a failed one stays faulty */
    for (j = 0; j < a->geo.members + a->nspares; j++)
      if (dev < array_slot (a, j)->sb.max_dev)
        array_slot (a, j)->sb.dev_roles[dev] = MD_ROLE_SPARE;
  }
}

/* The last window is written: with no request inside the engine, every
 * role's data starts at its new offset, the array takes its new size
 * and the superblocks say so (md's raid5_finish_reshape). */
static int
finish (struct raid_array *a)
{
  struct raid_reshape *r = &a->reshape;
  uint64_t old_bytes = r->old.array_bytes;
  uint64_t old_sync = geometry_sync_bytes (&a->geo);
  /* (A RAID10's sync units are the array's: they grow with it.) */
  bool synced = a->resync_front >= a->ops->sync_units (a);
  unsigned i;
  int rc;

  array_hold_requests (a);
  if (array_flush (a) == -1) {
    array_release_requests (a);
    return -1;
  }
  pthread_mutex_lock (&a->sb_lock);
  for (i = 0; i < a->geo.members; i++) {
    struct raid_slot *s = &a->slots[i];
    /* Re-added while the reshape ran, left out of it: all of it is
     * rebuilt, in the new geometry. */
    if (slot_state (s) == SLOT_RECOVERING) {
      __atomic_store_n (&s->front, 0, __ATOMIC_RELEASE);
      s->partial = false;
    }
    if (!s->io)
      continue; /* a missing role's device brings its own offset */
    move_offset (s, r->backwards ? (int64_t)r->delta : -(int64_t)r->delta);
  }
  for (i = 0; i < a->nspares; i++) {
    if (i < reshape_leaving (a) && a->spares[i].io)
      move_offset (&a->spares[i], (int64_t)r->delta);
    clear_fields (&a->spares[i].sb);
  }
  dropped_roles_spare_in_superblocks (a);
  r->active = false;
  r->backwards = false;
  memset (&r->fresh, 0, sizeof r->fresh);
  reshape_codes_free (a);
  __atomic_store_n (&a->geo.array_bytes, r->new_bytes, __ATOMIC_RELEASE);
  reshape_bitmap_follows (a, old_sync);
  if (r->to_raid0)
    raid0_again (a);
  /* Stopped uncleanly at some point: the resync starts again from the
   * first unit of the new geometry (the regions the bitmap marks, or
   * all), as the old resync position means nothing in it. */
  a->resync_front = synced ? a->ops->sync_units (a) : 0;
  a->last_work_bytes = a->job.pos * a->geo.chunk_bytes;
  a->job.kind = RAID_JOB_NONE;
  rc = array_write_superblocks_locked (a);
  pthread_mutex_unlock (&a->sb_lock);
  array_release_requests (a);
  array_log (a, RAID_LOG_INFO,
             "array %s: reshape finished: %u members, "
             "%" PRIu64 " bytes (%" PRIu64 " before)",
             a->name, a->geo.members, a->geo.array_bytes, old_bytes);
  array_event (a, RAID_EVENT_REBUILD_FINISHED, -1, "reshape");
  return rc == 0 ? 1 : -1;
}

/* The job moves data while no more roles are gone than the parity
 * does without (md reshapes degraded too) and its member I/O works:
 * else it stops (said once) until the server restarts.  The roles
 * gone from the old geometry into gone[0], from the new into gone[1]. */
static int
usable (struct raid_array *a, struct member_set gone[2])
{
  if (a->reshape.stalled)
    return -1;
  if (reshape_gone (a, false, &gone[0]) == 0
      && reshape_gone (a, true, &gone[1]) == 0)
    return 0;
  array_log (a, RAID_LOG_ERROR,
             "array %s: more than %u member%s gone: "
             "the reshape stops, and requests fail",
             a->name, a->geo.parity_members,
             a->geo.parity_members == 1 ? " is" : "s are");
  a->reshape.stalled = true;
  return -1;
}

/* A window's pieces: new stripes [at, at+n) of it, its data read from
 * the old geometry into buf from stripe s0 on. */
struct window {
  struct pieces p; /* first: run_pieces hands it back */
  uint8_t *buf;
  uint64_t s0;
  struct member_set gone[2]; /* the roles left out, old and new */
};

static int
move_piece (struct pieces *p, uint64_t at, uint64_t n, unsigned i)
{
  const struct window *w = (const struct window *)p;
  struct raid_array *a = p->a;
  const uint64_t S = reshape_stripe_bytes (a);
  uint64_t from = at * S, end = (at + n) * S, have;
  uint8_t *buf = w->buf + (at - w->s0) * S;

  /* The old data, and zeros past its end. */
  if (end > a->reshape.old.array_bytes)
    end = a->reshape.old.array_bytes;
  have = end > from ? end - from : 0;
  if (have && reshape_read_range (a, false, &w->gone[0], buf, have, from) == -1)
    return -1;
  memset (buf + have, 0, n * S - have);
  return reshape_write_stripes (a, &w->gone[1], buf, at, at + n);
}

/* Move new stripes [s0, s1) with the workers, a few stripes each at a
 * time, as a rebuild's pieces: while one waits for its reads or
 * writes, another computes. */
static int
move_window (struct raid_array *a, const struct member_set gone[2],
             uint8_t *buf, uint64_t s0, uint64_t s1)
{
  const uint64_t C = a->geo.chunk_bytes;
  struct window w = {
    .p = { .a = a,
           .pos = s0,
           .len = s1 - s0,
           .do_piece = move_piece,
           .each = PIECE_BYTES / C ? PIECE_BYTES / C : 1 },
    .buf = buf,
    .s0 = s0,
    .gone = { gone[0], gone[1] },
  };

  return run_pieces (&w.p, worker_count (a, w.p.each * C, (s1 - s0) * C));
}

/* The window of new stripes [s0, s1) is being moved (s1 == s0: none
 * is): client writes to its stripes in either geometry wait. */
static void
set_busy (struct raid_array *a, uint64_t s0, uint64_t s1)
{
  struct raid_reshape *r = &a->reshape;
  const uint64_t S = reshape_stripe_bytes (a);
  const uint64_t S0 = reshape_stripe_of (&r->old);

  pthread_mutex_lock (&r->busy_mutex);
  r->busy_lo = s1 == s0 ? 0 : s0 * S / S0 * S0;
  r->busy_hi = s1 == s0 ? 0 : (s1 * S + S0 - 1) / S0 * S0;
  if (s1 == s0)
    pthread_cond_broadcast (&r->busy_cond);
  pthread_mutex_unlock (&r->busy_mutex);
}

/* With the lock held alone: the next window, new stripes [*s0, *s1),
 * n at most, on the side of the front not moved yet and as far as the
 * critical section allows (the superblocks moved up to the front
 * first when it allows nothing).  0, or -1 if that write failed. */
static int
pick_window (struct raid_array *a, uint64_t n, uint64_t *s0, uint64_t *s1)
{
  struct raid_reshape *r = &a->reshape;
  int rc = 0;

  /* With safe at the front the window has room: delta >= a unit. */
  if (r->backwards) {
    *s1 = r->front;
    if (window_floor (a) >= *s1)
      rc = reshape_checkpoint (a);
    *s0 = *s1 > n ? *s1 - n : 0;
    if (*s0 < window_floor (a))
      *s0 = window_floor (a);
    return rc;
  }
  *s0 = r->front;
  if (window_limit (a) <= *s0)
    rc = reshape_checkpoint (a);
  *s1 = *s0 + n;
  if (*s1 > window_limit (a))
    *s1 = window_limit (a);
  if (*s1 > total_stripes (a))
    *s1 = total_stripes (a);
  return rc;
}

int
step_reshape (struct raid_array *a, uint64_t budget)
{
  struct raid_reshape *r = &a->reshape;
  const uint64_t C = a->geo.chunk_bytes, S = reshape_stripe_bytes (a);
  uint64_t n = budget / C, s0, s1;
  struct member_set gone[2], now_gone[2];
  uint8_t *buf;
  int rc;

  if (usable (a, gone) == -1)
    return -1;
  if (n * S > WINDOW_BYTES)
    n = WINDOW_BYTES / S;
  n = n / unit_stripes (a) * unit_stripes (a);
  if (n == 0)
    n = unit_stripes (a);
  buf = malloc (n * S);
  if (!buf)
    return -1;
  pthread_rwlock_wrlock (&r->lock);
  rc = pick_window (a, n, &s0, &s1);
  /* The window is moved without the lock: reads of its bytes go to the
   * old geometry, whose copy it leaves alone (the limit), and nothing
   * reads the new stripes it writes until the front passes them; a
   * reader that began before the front last moved, and may read old
   * copies this window overwrites, was waited for by the wrlock. */
  if (rc == 0) {
    set_busy (a, s0, s1);
    pthread_rwlock_unlock (&r->lock);
    rc = move_window (a, gone, buf, s0, s1);
    pthread_rwlock_wrlock (&r->lock);
    set_busy (a, s0, s0);
  }
  if (rc == 0) {
    __atomic_store_n (&r->front, r->backwards ? s0 : s1, __ATOMIC_RELEASE);
    if (moved_stripes (a) < total_stripes (a)
        && (r->backwards ? r->safe - s0 : s1 - r->safe) * C
               >= checkpoint_bytes (a))
      rc = reshape_checkpoint (a);
  }
  pthread_rwlock_unlock (&r->lock);
  free (buf);
  /* A member failed in the window (a write to it did): the window is
   * moved again without it, its stripes still below unmoved data. */
  if (rc == -1 && reshape_gone (a, false, &now_gone[0]) == 0
      && reshape_gone (a, true, &now_gone[1]) == 0
      && memcmp (now_gone, gone, sizeof gone) != 0)
    return 1;
  if (rc == -1) {
    array_log (a, RAID_LOG_ERROR,
               "array %s: the reshape stops at new "
               "stripe %" PRIu64 " of %" PRIu64 ": %s; requests fail where "
               "the members do, until the server restarts",
               a->name, s0, total_stripes (a), strerror (errno ? errno : EIO));
    r->stalled = true;
    return -1;
  }
  pthread_mutex_lock (&a->sb_lock);
  a->job.pos = moved_stripes (a);
  a->job.work_bytes += (s1 - s0) * C;
  pthread_mutex_unlock (&a->sb_lock);
  if (moved_stripes (a) == total_stripes (a))
    return finish (a);
  return 1;
}

void
reshape_describe (const struct raid_array *a, char *buf, size_t len)
{
  const struct raid_geometry *o = &a->reshape.old, *g = &a->geo;
  char l1[32], l2[32];
  size_t used = 0;

  buf[0] = '\0';
  if (a->reshape.to_raid0)
    used += (size_t)snprintf (buf, len,
                              "of a RAID0 from %u to %u members, as a RAID4 "
                              "without its parity (md's way)",
                              o->members - 1, g->members - 1);
  else if (o->members != g->members)
    used += (size_t)snprintf (buf, len, "from %u to %u members", o->members,
                              g->members);
  if (o->chunk_bytes != g->chunk_bytes && used < len)
    used += (size_t)snprintf (
        buf + used, len - used, "%sfrom a %" PRIu64 "K to a %" PRIu64 "K chunk",
        used ? ", " : "", o->chunk_bytes / 1024, g->chunk_bytes / 1024);
  if (o->layout != g->layout && used < len)
    snprintf (buf + used, len - used, "%sfrom layout %s to %s",
              used ? ", " : "",
              raid_layout_name (o->level, o->layout, l1, sizeof l1),
              raid_layout_name (g->level, g->layout, l2, sizeof l2));
}

void
reshape_start_job (struct raid_array *a)
{
  char what[160];

  a->job = (struct raid_job){
    .kind = RAID_JOB_RESHAPE,
    .pos = moved_stripes (a),
    .end = total_stripes (a),
    .started_at = moved_stripes (a),
  };
  reshape_describe (a, what, sizeof what);
  array_log (a, RAID_LOG_INFO,
             "array %s: reshape %s runs from new stripe %" PRIu64
             " of %" PRIu64 "%s",
             a->name, what, a->reshape.front, a->job.end,
             a->reshape.backwards ? " down" : "");
  array_event (a, RAID_EVENT_REBUILD_STARTED, -1, "reshape");
}

int
reshape_load (struct raid_array *a, const struct md_superblock *ref, char *err,
              size_t errlen)
{
  struct raid_reshape *r = &a->reshape;
  int32_t delta_disks = (int32_t)ref->delta_disks;
  int32_t moved = (int32_t)ref->new_offset;
  struct member_set gone;
  uint64_t S, pos;
  unsigned m;
  char what[160];

  if (!(ref->feature_map & MD_FEATURE_RESHAPE))
    return 0;
  /* The superblock's checks allow only a RAID5/6 growing or shrinking
   * (superblock.c); the old geometry must still be one (geometry_init
   * says why not).  A shrink's dropped roles are the first spares
   * (place.c). */
  r->old = a->geo;
  r->old.members = (unsigned)((int32_t)a->geo.members - delta_disks);
  r->old.layout = ref->layout;
  r->old.chunk_bytes = (uint64_t)ref->chunk_sectors * 512;
  if (geometry_init (&r->old, err, errlen) == -1)
    return -1;
  r->backwards = delta_disks < 0;
  r->delta = (uint64_t)(r->backwards ? (int64_t)moved : -(int64_t)moved) * 512;
  if (reshape_gone (a, false, &gone) == -1 || reshape_gone (a, true, &gone) == -1)
    return array_refuse (err, errlen,
                         "array %s is in the middle of a reshape with more "
                         "members not active than its RAID%d continues one "
                         "without",
                         a->name, a->geo.level);
  for (m = 0; m < r->old.members; m++) {
    const struct raid_slot *s = array_slot (a, m);
    if (slot_state (s) != SLOT_ACTIVE)
      continue;
    if (!(s->sb.feature_map & MD_FEATURE_NEW_OFFSET)
        || s->sb.new_offset != ref->new_offset
        || (!r->backwards
            && s->data_offset_bytes < r->delta + 2 * MD_SB_OFFSET_BYTES)
        || (r->backwards && m < a->geo.members
            && s->io->size_bytes
                   < s->data_offset_bytes + r->delta + a->geo.member_bytes))
      return array_refuse (err, errlen,
                           "member %u (%s): new_offset %d sectors, the "
                           "array's %d: not a reshape nbdraid can continue",
                           m, s->path, (int32_t)s->sb.new_offset, moved);
  }
  S = reshape_stripe_bytes (a);
  pos = ref->reshape_position * 512;
  r->new_bytes = a->geo.array_bytes;
  if (pos % (S * unit_stripes (a)) || pos / S > total_stripes (a))
    return array_refuse (
        err, errlen,
        "array %s: reshape_position %" PRIu64 " is not "
        "on a boundary of its new stripes (%" PRIu64 " sectors)",
        a->name, ref->reshape_position, S * unit_stripes (a) / 512);
  if (reshape_codes_init (a) == -1)
    return array_refuse (err, errlen, "array %s: %s", a->name,
                         strerror (errno));
  r->front = r->safe = pos / S;
  if (r->old.array_bytes < a->geo.array_bytes)
    a->geo.array_bytes = r->old.array_bytes;
  r->active = true;
  reshape_describe (a, what, sizeof what);
  array_log (a, RAID_LOG_INFO,
             "array %s: reshape %s resumes at new stripe %" PRIu64
             " of %" PRIu64,
             a->name, what, r->front, total_stripes (a));
  reshape_start_job (a);
  return 0;
}

void
reshape_mark_fresh (struct raid_array *a, const struct md_superblock *ref)
{
  int32_t delta_disks = (int32_t)ref->delta_disks;
  unsigned m;

  if (!(ref->feature_map & MD_FEATURE_RESHAPE) || delta_disks < 0)
    return;
  for (m = 0; m + (unsigned)delta_disks < a->geo.members; m++) {
    struct raid_slot *s = &a->slots[m];
    /* Its own superblock's reshape_position: one that missed the last
     * checkpoint's write holds the data that checkpoint covers (it was
     * flushed first).  A growing RAID0's filler is one whatever its
     * superblock says (it may have missed the reshape's first write). */
    bool filler = a->reshape.to_raid0
                  && m + 1 + (unsigned)delta_disks == a->geo.members;
    if ((slot_state (s) == SLOT_RECOVERING
         && slot_front (s) >= reshape_fresh_front (a, &s->sb))
        || (filler
            && (slot_state (s) == SLOT_ACTIVE
                || slot_state (s) == SLOT_RECOVERING))) {
      member_set_add (&a->reshape.fresh, m);
      s->state = SLOT_ACTIVE;
      s->front = 0;
    }
  }
}

/* Devices that missed the last superblock write of a finished reshape
 * still say where their data started before, and the reshape: move
 * them on, roles and spares (a shrink's dropped roles are spares). */
void
reshape_settle_lagging (struct raid_array *a, const struct md_superblock *ref)
{
  unsigned i;

  if (ref->feature_map & MD_FEATURE_RESHAPE)
    return;
  for (i = 0; i < a->geo.members + a->nspares; i++) {
    struct raid_slot *s = array_slot (a, i);
    if (!s->io
        || !(s->sb.feature_map & (MD_FEATURE_NEW_OFFSET | MD_FEATURE_RESHAPE)))
      continue;
    move_offset (s, s->sb.feature_map & MD_FEATURE_NEW_OFFSET
                        ? (int64_t)(int32_t)s->sb.new_offset * 512
                        : 0);
  }
}
