/* nbdraid: a reshape of a RAID5/6 starts: nbdraid grow --raid-devices
 * N, --chunk or --layout, mdadm's --grow without a backup file: spares
 * take the new roles, in sync from the start (md's
 * raid5_start_reshape), every role's data offset is to move back by
 * delta (md's new_offset), and the superblocks say so (reshape bit,
 * reshape_position 0, delta_disks, new_layout, new_chunk) before the
 * reshape job (job-reshape.c) moves the first byte.  Fewer members
 * (md's backwards reshape) move the data offset up instead, from the
 * end of the smaller array, whose size the array must be cut to
 * first (nbdraid grow --array-size, as mdadm wants), and the roles
 * dropped become spares.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reshape-start.h"

/* The first byte device s may hold data at: past its superblock
 * block, its bitmap and its bad-block log, if it has them. */
static uint64_t
data_floor (const struct raid_array *a, const struct raid_slot *s)
{
  uint64_t floor = MD_SB_OFFSET_BYTES + MD_SB_BLOCK_BYTES, end;
  int32_t bb = (int32_t)s->sb.bblog_offset;

  if (a->bitmap.present && s->sb.bitmap_offset_sectors > 0) {
    end = MD_SB_OFFSET_BYTES + (uint64_t)s->sb.bitmap_offset_sectors * 512
          + a->bitmap.disk_bytes;
    floor = end > floor ? end : floor;
  }
  if (s->sb.bblog_size && bb > 0) {
    end = MD_SB_OFFSET_BYTES + ((uint64_t)bb + s->sb.bblog_size) * 512;
    floor = end > floor ? end : floor;
  }
  return floor;
}

/* How far every device that will hold a role moves its data back, in
 * whole units (chunks of the larger size), into *delta: half the room
 * the device with the least has (it into *least, an op index), at
 * least a unit.  The other half is left for the next reshape, which
 * can only move the data further back; a larger move means fewer
 * checkpoints (job-reshape.c). */
static void
room (struct raid_array *a, unsigned n, uint64_t unit, uint64_t *delta,
      unsigned *least)
{
  unsigned i, taken = 0;

  *delta = UINT64_MAX;
  *least = 0;
  for (i = 0; i < a->geo.members + a->nspares; i++) {
    const struct raid_slot *s = array_slot (a, i);
    uint64_t r;

    if (i >= a->geo.members) {
      if (taken == n - a->geo.members
          || !array_spare_fits (a, i - a->geo.members))
        continue;
      taken++;
    }
    r = s->data_offset_bytes > data_floor (a, s)
            ? s->data_offset_bytes - data_floor (a, s)
            : 0;
    if (r < *delta) {
      *delta = r;
      *least = i;
    }
  }
  *delta = *delta >= 2 * unit ? *delta / 2 / unit * unit : *delta / unit * unit;
}

/* The larger of the two chunks: md moves a reshape on in units of it,
 * and wants that much room at least (raid5_run's min_offset_diff); a
 * RAID10 a chunk of each far copy (raid10_start_reshape's). */
static uint64_t
reshape_unit (const struct raid_array *a, const struct reshape_target *to)
{
  uint64_t c = to->chunk_bytes > a->geo.chunk_bytes ? to->chunk_bytes
                                                    : a->geo.chunk_bytes;

  return a->geo.level == 10 ? c * a->geo.far : c;
}

/* A shrink: a RAID5/6 no bigger than the fewer members hold (mdadm's
 * "use --grow --array-size first"), each member kept moving its data
 * up a unit (md's min_offset_diff), the room past it giving the new
 * data area's size, a chunk less than before if that is all there is
 * (into *member_bytes). */
static int
check_shrink (struct raid_array *a, const struct reshape_target *to,
              uint64_t unit, uint64_t *delta, uint64_t *member_bytes,
              char *err, size_t errlen)
{
  const unsigned n = to->members;
  struct raid_geometry g = a->geo;
  uint64_t mb = a->geo.member_bytes;
  unsigned m, least = 0;

  if (a->geo.level != 5 && a->geo.level != 6 && a->geo.level != 10)
    return array_refuse (err, errlen,
                         "array %s is RAID%d: md takes members from a "
                         "RAID5, RAID6 or RAID10 only",
                         a->name, a->geo.level);
  for (m = 0; m < n; m++) {
    const struct raid_slot *s = &a->slots[m];
    uint64_t end = s->data_offset_bytes + unit, room;

    room = s->io->size_bytes > end ? s->io->size_bytes - end : 0;
    room = room / to->chunk_bytes * to->chunk_bytes;
    if (room < mb) {
      mb = room;
      least = m;
    }
  }
  if (mb == 0)
    return array_refuse (err, errlen,
                         "member %u (%s) has no room to move its data up "
                         "%" PRIu64 " bytes, as md does without a backup file",
                         least, a->slots[least].path, unit);
  g.members = n;
  g.member_bytes = mb;
  if (geometry_init (&g, err, errlen) == -1)
    return -1;
  if (raid_size (a) > g.array_bytes)
    return array_refuse (err, errlen,
                         "array %s is %" PRIu64 " bytes, more than %u "
                         "members hold (%" PRIu64 "): move any data off "
                         "its end, then nbdraid grow --array-size %" PRIu64
                         " first, as with mdadm",
                         a->name, raid_size (a), n, g.array_bytes,
                         g.array_bytes);
  *delta = unit;
  *member_bytes = mb;
  return 0;
}

/* What the array must be: a writable, idle, whole RAID5/6 of its own
 * devices; the target as many members or more, spares for the new
 * ones, a chunk that divides each member's data, something changed,
 * and room before every device's data to move it back a chunk (the
 * larger of the two); or fewer members (check_shrink).  The bytes each
 * member gives the new geometry into *member_bytes. */
static int
check_array (struct raid_array *a, const struct reshape_target *to,
             uint64_t *delta, uint64_t *member_bytes, char *err,
             size_t errlen)
{
  const unsigned n = to->members;
  const uint64_t unit = reshape_unit (a, to);
  unsigned m, least;

  if (a->readonly)
    return array_refuse (err, errlen, "array %s is read-only", a->name);
  if (array_check_alive (a) == -1)
    return array_refuse (err, errlen, "array %s has failed", a->name);
  if (a->nchildren)
    return array_refuse (err, errlen,
                         "array %s is built of nested arrays: "
                         "changing its members is not supported",
                         a->name);
  /* md's check_reshape() refuses too (raid5_has_log, raid5_has_ppl):
   * the PPL's area lies where the data would move back to. */
  if (a->ppl.on)
    return array_refuse (err, errlen,
                         "array %s keeps a partial parity log: md reshapes "
                         "no array with one",
                         a->name);
  if (a->journal.on)
    return array_refuse (err, errlen,
                         "array %s keeps a write journal: md reshapes no "
                         "array with one",
                         a->name);
  if (a->job.kind != RAID_JOB_NONE)
    return array_refuse (err, errlen,
                         "array %s is busy with a %s; grow it later", a->name,
                         raid_job_name (a->job.kind));
  /* md's raid10_check_reshape: near and offset layouts only. */
  if (a->geo.level == 10 && a->geo.far > 1 && !a->geo.far_offset)
    return array_refuse (err, errlen,
                         "array %s is RAID10 with a far layout: md "
                         "cannot reshape it",
                         a->name);
  if (a->resync_front < a->ops->sync_units (a))
    return array_refuse (err, errlen, "array %s has a resync to finish first",
                         a->name);
  /* (grow-shape.c refuses an unchanged chunk or layout itself.) */
  if (n == a->geo.members && to->chunk_bytes == a->geo.chunk_bytes
      && to->layout == a->geo.layout)
    return array_refuse (err, errlen, "array %s already has %u members",
                         a->name, n);
  for (m = 0; m < a->geo.members; m++)
    if (slot_state (&a->slots[m]) != SLOT_ACTIVE)
      return array_refuse (err, errlen,
                           "array %s is degraded (member %u is %s): "
                           "a reshape needs every member active",
                           a->name, m,
                           slot_state (&a->slots[m]) == SLOT_RECOVERING
                               ? "recovering"
                               : "not active");
  if (a->geo.member_bytes % to->chunk_bytes)
    return array_refuse (err, errlen,
                         "array %s: the %" PRIu64 " bytes each member holds "
                         "are not a multiple of a %" PRIu64 "K chunk",
                         a->name, a->geo.member_bytes, to->chunk_bytes / 1024);
  if (n < a->geo.members)
    return check_shrink (a, to, unit, delta, member_bytes, err, errlen);
  *member_bytes = a->geo.member_bytes;
  if (array_usable_spares (a) < n - a->geo.members)
    return array_refuse (err, errlen,
                         "array %s needs %u spare%s, array has %u (add "
                         "them with nbdraid add first)",
                         a->name, n - a->geo.members,
                         n - a->geo.members == 1 ? "" : "s",
                         array_usable_spares (a));
  room (a, n, unit, delta, &least);
  if (*delta == 0)
    return array_refuse (err, errlen,
                         "%s %s has no room for a chunk (%" PRIu64 " bytes) "
                         "before its data (data offset %" PRIu64 "): the "
                         "reshape moves the data back, as md does without "
                         "a backup file",
                         least < a->geo.members ? "member" : "spare",
                         array_slot (a, least)->path, unit,
                         array_slot (a, least)->data_offset_bytes);
  return 0;
}

/* Every superblock the array writes records the reshape: n roles, the
 * level, the new layout and chunk in new_* (md keeps the old ones in
 * layout and chunksize until the end), the bytes each member gives,
 * its position (0, or a shrink's end) and the data offset moving back
 * by delta (up, for a shrink). */
static void
record (struct raid_array *a, unsigned old, uint64_t delta)
{
  const struct raid_reshape *r = &a->reshape;
  int32_t moved = (int32_t)(delta / 512);
  unsigned i;

  for (i = 0; i < a->geo.members + a->nspares; i++) {
    struct md_superblock *sb = &array_slot (a, i)->sb;
    sb->level = a->geo.level;
    sb->layout = r->old.layout;
    sb->raid_disks = a->geo.members;
    sb->size_sectors = a->geo.member_bytes / 512;
    sb->feature_map |= MD_FEATURE_RESHAPE | MD_FEATURE_NEW_OFFSET;
    sb->reshape_position = r->front * reshape_stripe_bytes (a) / 512;
    sb->new_level = (uint32_t)a->geo.level;
    sb->new_layout = a->geo.layout;
    sb->new_chunk = (uint32_t)(a->geo.chunk_bytes / 512);
    sb->delta_disks = (uint32_t)((int32_t)a->geo.members - (int32_t)old);
    sb->new_offset = (uint32_t)(r->backwards ? moved : -moved);
  }
}

/* A shrink's dropped roles, n and up, become the first spares while
 * it runs (reshape.h); the config's member lines of them spare lines
 * (their paths into changed). */
static void
dropped_roles_to_spares (struct raid_array *a, unsigned n, char *changed,
                         size_t changedlen)
{
  unsigned k = a->geo.members - n, m;
  size_t used = strlen (changed);

  memmove (&a->spares[k], &a->spares[0], a->nspares * sizeof *a->spares);
  for (m = n; m < a->geo.members; m++) {
    a->spares[m - n] = a->slots[m];
    used += (size_t)snprintf (changed + used,
                              used < changedlen ? changedlen - used : 0,
                              "%s\n", a->slots[m].path);
  }
  memset (&a->slots[n], 0, k * sizeof *a->slots);
  a->nspares += k;
}

/* A RAID0 grows as md grows one (mdadm's Grow.c): it is a RAID4 of
 * one more role, the parity one, last and missing (md's
 * raid45_takeover_raid0); the new devices take the roles from that one
 * up, so the new last role, parity again, is the one left missing; and
 * it is RAID0 again when done.  old becomes that RAID4, g the new one. */
static int
through_raid4 (struct raid_geometry *old, struct raid_geometry *g, char *err,
               size_t errlen)
{
  old->level = g->level = 4;
  old->layout = g->layout = LAYOUT_PARITY_N;
  old->members++;
  g->members++;
  if (geometry_init (old, err, errlen) == -1)
    return -1;
  return 0;
}

/* A RAID5 becomes a RAID6 of one more member as md makes it without
 * --layout=preserve (raid6_takeover, then a reshape): a RAID6 of the
 * RAID5's layout with -6, its Q role, the last, filled by a spare
 * fresh, restriped into the layout asked for, P and Q of every new
 * stripe written whole, so Q is never built on its own.  old becomes
 * that RAID6. */
static int
through_raid6 (struct raid_geometry *old, char *err, size_t errlen)
{
  old->level = 6;
  if (old->layout != LAYOUT_PARITY_N)
    old->layout += LAYOUT_RAID6_OFFSET;
  old->members++;
  return geometry_init (old, err, errlen);
}

/* With requests held and the array quiesced, sb_lock held: the spares
 * take roles old..n-1, in sync (they hold no old data; the reshape
 * writes all of theirs), the geometry becomes the new one at the old
 * size, the reshape starts at 0 and the superblocks say so.  A RAID0's
 * first new device fills the RAID4's missing parity role: fresh, its
 * old-geometry copy nothing. */
static int
apply (struct raid_array *a, const struct reshape_target *to, uint64_t delta,
       uint64_t member_bytes, char *changed, size_t changedlen, char *err,
       size_t errlen)
{
  struct raid_reshape *r = &a->reshape;
  struct raid_geometry g = a->geo, old = a->geo;
  const uint64_t old_sync = geometry_sync_bytes (&a->geo);
  const bool raid0 = a->geo.level == 0;
  const bool to_raid6 = a->geo.level == 5 && to->level == 6;
  const unsigned n = to->members;
  unsigned m;

  g.level = to->level;
  g.members = n;
  g.chunk_bytes = to->chunk_bytes;
  g.layout = to->layout;
  g.member_bytes = member_bytes;
  if ((raid0 && through_raid4 (&old, &g, err, errlen) == -1)
      || (to_raid6 && through_raid6 (&old, err, errlen) == -1)
      || geometry_init (&g, err, errlen) == -1)
    return -1;
  if (a->ops->teardown)
    a->ops->teardown (a);
  a->level_state = NULL;
  memset (&r->fresh, 0, sizeof r->fresh);
  if (raid0 || to_raid6)
    member_set_add (&r->fresh, a->geo.members);
  for (m = a->geo.members; m < n; m++) {
    a->geo.members = m + 1;
    /* The config's spare line of this device becomes a member line. */
    array_spare_takes_role (a, m, changed, changedlen);
    __atomic_store_n (&a->slots[m].state, SLOT_ACTIVE, __ATOMIC_RELEASE);
  }
  if (n < a->geo.members)
    dropped_roles_to_spares (a, n, changed, changedlen);
  if (raid0) {
    memset (&a->slots[n], 0, sizeof a->slots[n]);
    a->slots[n].state = SLOT_MISSING;
    a->geo.members = n + 1;
  }
  /* Field by field: the locks in r stay as they are. */
  r->active = true;
  r->to_raid0 = raid0;
  r->old = old;
  r->new_bytes = g.array_bytes;
  r->backwards = n < old.members;
  r->delta = delta;
  r->front = r->safe = r->backwards ? g.array_bytes / reshape_stripe_of (&g) : 0;
  r->busy_lo = r->busy_hi = 0;
  r->stalled = false;
  if (old.array_bytes < g.array_bytes)
    g.array_bytes = old.array_bytes;
  a->geo = g;
  a->ops = a->level_ops (g.level);
  if (a->ops->setup && a->ops->setup (a, err, errlen) == -1)
    return -1;
  /* Fewer bytes of each member, a smaller RAID10: the bitmap covers
   * those. */
  reshape_bitmap_follows (a, old_sync);
  /* In sync, as the RAID0 was (it had no parity to be out of it). */
  if (raid0)
    __atomic_store_n (&a->resync_front, a->ops->sync_units (a),
                      __ATOMIC_RELEASE);
  if (reshape_codes_init (a) == -1)
    return array_refuse (err, errlen, "array %s: %s", a->name,
                         strerror (errno));
  record (a, old.members, delta);
  reshape_start_job (a);
  if (array_write_superblocks_locked (a) == -1)
    return array_refuse (err, errlen,
                         "array %s failed while its superblocks "
                         "were written",
                         a->name);
  return 0;
}

int
raid_admin_reshape (struct raid_array *a, const struct reshape_target *to,
                    char *changed, size_t changedlen, char *done,
                    size_t donelen, char *err, size_t errlen)
{
  uint64_t delta, member_bytes, old_bytes = a->geo.array_bytes;
  char what[160];
  int r;

  changed[0] = '\0';
  pthread_mutex_lock (&a->sb_lock);
  r = check_array (a, to, &delta, &member_bytes, err, errlen);
  pthread_mutex_unlock (&a->sb_lock);
  if (r == -1)
    return -1;
  array_hold_requests (a);
  array_quiesce (a);
  pthread_mutex_lock (&a->sb_lock);
  /* Checked again: a member may have failed, a job started. */
  r = check_array (a, to, &delta, &member_bytes, err, errlen);
  if (r == 0)
    r = apply (a, to, delta, member_bytes, changed, changedlen, err, errlen);
  pthread_mutex_unlock (&a->sb_lock);
  array_unquiesce (a);
  array_release_requests (a);
  if (r == -1)
    return -1;
  reshape_describe (a, what, sizeof what);
  array_log (a, RAID_LOG_INFO,
             "array %s: reshape %s starts; data offsets move %s "
             "%" PRIu64 " bytes; the array is %" PRIu64 " bytes, "
             "%" PRIu64 " when done",
             a->name, what, a->reshape.backwards ? "up" : "back", delta,
             old_bytes, a->reshape.new_bytes);
  if (a->reshape.backwards)
    snprintf (done, donelen,
              "array %s is reshaping %s; it holds %" PRIu64 " bytes from "
              "now on, and the members dropped are spares when done",
              a->name, what, a->reshape.new_bytes);
  else if (a->reshape.new_bytes == old_bytes)
    snprintf (done, donelen, "array %s is reshaping %s", a->name, what);
  else
    snprintf (done, donelen,
              "array %s is reshaping %s; it grows from %" PRIu64 " to %" PRIu64
              " bytes when done",
              a->name, what, old_bytes, a->reshape.new_bytes);
  return 0;
}
