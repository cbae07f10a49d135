/* nbdraid: assembling an array from its members' superblocks.
 *
 * The config lists the devices (members and spares).  The freshest
 * superblock of the array (highest events) is the reference, and its
 * dev_roles place every device: in a role, as a spare, or as faulty.
 * A device whose own events lag the reference by more than one holds
 * stale data and is not used (it needs recovery).  One behind is
 * current, as md and mdadm take it: a crash between two members'
 * superblock writes leaves exactly that, and a member that really
 * dropped out is marked faulty in the reference's roles instead.  A
 * role no device fills is missing.  The
 * array starts when the level tolerates what is not there; roles the
 * superblocks still count on need degraded=true (mdadm --run).
 *
 * The devices are opened in candidates.c and placed in place.c; here
 * the array is checked, built on them and started.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "candidates.h"
#include "consistency.h"
#include "controllers.h"
#include "levels.h"
#include "place.h"
#include "shared-spares.h"

/* Threads in the member I/O pool: enough for each of nbdkit's 16
 * threads (its default) to have all of a request's member operations
 * in flight, one in its own thread and the others here, up to 64.
 * Members that wait on a network or a disk keep that many requests in
 * flight; memory-speed ones do not use the pool. */
static unsigned
pool_threads (unsigned members)
{
  unsigned n = 16 * (members - 1);
  return n < 4 ? 4 : n > 64 ? 64 : n;
}

/* The layout and chunk the array has, or takes in the reshape under
 * way (md keeps the old ones in layout and chunksize until its end):
 * the config names those. */
static uint32_t
sb_layout (const struct md_superblock *sb)
{
  return sb->feature_map & MD_FEATURE_RESHAPE ? sb->new_layout : sb->layout;
}

static uint32_t
sb_chunk_sectors (const struct md_superblock *sb)
{
  return sb->feature_map & MD_FEATURE_RESHAPE ? sb->new_chunk
                                              : sb->chunk_sectors;
}

/* A RAID0 growing as md grows one: a RAID4 mid-reshape, of one role
 * more than the config's RAID0 lists, its parity, missing
 * (reshape-start.c).  RAID0 again when done. */
static bool
raid0_growing (const struct md_superblock *sb, const struct raid_config *cfg)
{
  return cfg->level == 0 && sb->level == 4
         && (sb->feature_map & MD_FEATURE_RESHAPE)
         && sb->raid_disks == cfg->nmembers + 1;
}

/* The config and the superblocks must describe the same geometry. */
static int
check_geometry (const struct md_superblock *sb, const struct raid_config *cfg,
                char *err, size_t errlen)
{
  const struct raid_level *l = raid_level_find (cfg->level);
  char c[32], s[32];

  if (raid0_growing (sb, cfg))
    return 0;
  if (sb->level != cfg->level)
    return array_refuse (err, errlen,
                         "%s:%d: level is %d but the superblocks "
                         "say RAID%d",
                         cfg->file, cfg->level_line, cfg->level, sb->level);
  if (sb->raid_disks != cfg->nmembers)
    return array_refuse (err, errlen,
                         "%s: lists %u members but the superblocks "
                         "say the array has %u",
                         cfg->file, cfg->nmembers, sb->raid_disks);
  if (l->layouts && sb_layout (sb) != cfg->layout)
    return array_refuse (
        err, errlen,
        "%s:%d: layout is %s but the superblocks "
        "say %s",
        cfg->file, cfg->layout_line,
        raid_layout_name (cfg->level, cfg->layout, c, sizeof c),
        raid_layout_name (sb->level, sb_layout (sb), s, sizeof s));
  if (l->has_chunk && (uint64_t)sb_chunk_sectors (sb) * 512 != cfg->chunk_bytes)
    return array_refuse (err, errlen,
                         "%s:%d: chunk is %" PRIu64 "K but the "
                         "superblocks say %uK",
                         cfg->file, cfg->chunk_line, cfg->chunk_bytes / 1024,
                         sb_chunk_sectors (sb) / 2);
  /* The superblocks keep the policy; a config that names another asks
   * for a change (mdadm --grow --consistency-policy) we do not make. */
  if (cfg->ppl_line && cfg->ppl != md_sb_has_ppl (sb))
    return array_refuse (err, errlen,
                         "%s:%d: consistency-policy is %s but "
                         "the superblocks %s a partial parity log; "
                         "changing an array's policy is not supported",
                         cfg->file, cfg->ppl_line,
                         cfg->ppl      ? "ppl"
                         : cfg->bitmap ? "bitmap"
                                       : "resync",
                         md_sb_has_ppl (sb) ? "keep" : "keep no");
  if (cfg->ppl_line && cfg->journal != md_sb_has_journal (sb))
    return array_refuse (err, errlen,
                         "%s:%d: consistency-policy is %s but "
                         "the superblocks %s a write journal; "
                         "changing an array's policy is not supported",
                         cfg->file, cfg->ppl_line,
                         cfg->journal  ? "journal"
                         : cfg->ppl    ? "ppl"
                         : cfg->bitmap ? "bitmap"
                                       : "resync",
                         md_sb_has_journal (sb) ? "keep" : "keep no");
  if (!cfg->ppl_line && md_sb_has_journal (sb))
    return array_refuse (err, errlen,
                         "%s: the superblocks keep a write journal: the "
                         "config needs consistency-policy = journal and "
                         "[members] journal = PATH",
                         cfg->file);
  return 0;
}

/* md leaves a RAID0's size 0 in the superblock and stripes each
 * member's data area rounded down to the chunk (raid0.c): the smallest
 * such is ours, and check_data_areas refuses unequal ones (zones). */
static uint64_t
raid0_member_bytes (const struct raid_array *a)
{
  uint64_t smallest = UINT64_MAX, bytes;
  unsigned i;

  for (i = 0; i < a->geo.members; i++)
    if (a->slots[i].io) {
      bytes = md_sb_member_bytes (&a->slots[i].sb);
      if (bytes < smallest)
        smallest = bytes;
    }
  return smallest == UINT64_MAX ? 0 : smallest;
}

/* Every member in use must hold its data area; RAID0 members must be
 * equal because md stripes unequal ones in zones, which we do not
 * serve. */
static int
check_data_areas (const struct raid_array *a, char *err, size_t errlen)
{
  const struct raid_geometry *g = &a->geo;
  unsigned i;

  for (i = 0; i < g->members; i++) {
    const struct raid_slot *s = &a->slots[i];
    uint64_t data_bytes = s->sb.data_size_sectors * 512;

    if (s->state != SLOT_ACTIVE && s->state != SLOT_RECOVERING)
      continue;
    if (data_bytes < g->member_bytes ||
        s->data_offset_bytes + g->member_bytes > s->io->size_bytes)
      return array_refuse (err, errlen,
                           "%s: too small for the array: data "
                           "area of %" PRIu64 " bytes at %" PRIu64
                           " on a %" PRIu64
                           "-byte member, the array uses %" PRIu64,
                           s->path, data_bytes, s->data_offset_bytes,
                           s->io->size_bytes, g->member_bytes);
    if (g->lvl->zoned &&
        data_bytes / g->chunk_bytes * g->chunk_bytes != g->member_bytes)
      return array_refuse (err, errlen,
                           "%s: RAID0 members of unequal data size "
                           "(md's multi-zone RAID0) are not supported",
                           s->path);
  }
  return 0;
}

/* "path (why); path (why)" for the roles not active (recovering ones
 * included), or only for those the superblocks do not already record as
 * empty or faulty. */
static void
list_roles (const struct raid_array *a, bool only_unexpected, char *buf,
            size_t len)
{
  size_t used = 0;
  unsigned i;

  buf[0] = '\0';
  for (i = 0; i < a->geo.members && used < len; i++) {
    const struct raid_slot *s = &a->slots[i];
    if (s->state == SLOT_ACTIVE ||
        (only_unexpected && s->state != SLOT_MISSING))
      continue;
    used += (size_t)snprintf (
        buf + used, len - used, "%s%s (%s)", used ? "; " : "",
        s->path ? s->path : RAID_MEMBER_MISSING,
        s->state == SLOT_RECOVERING ? "recovering" : s->why);
  }
}

/* Can the array run with what is there, and may it? */
static int
check_startable (struct raid_array *a, const struct raid_options *opts,
                 char *err, size_t errlen)
{
  struct member_set gone;
  char list[1024];
  unsigned i, unexpected = 0;

  array_unavailable (a, &gone);
  if (!array_alive_without (a, &gone)) {
    list_roles (a, false, list, sizeof list);
    return array_refuse (err, errlen,
                         "array %s cannot start: %u of %u members "
                         "unavailable, more than RAID%d can lose: %s",
                         a->name, member_set_count (&gone), a->geo.members,
                         a->geo.level, list);
  }
  for (i = 0; i < a->geo.members; i++)
    unexpected += a->slots[i].state == SLOT_MISSING;
  if (unexpected && !opts->degraded) {
    list_roles (a, true, list, sizeof list);
    return array_refuse (err, errlen,
                         "array %s: %u member%s missing: %s; to "
                         "start it degraded anyway, pass degraded=true (like "
                         "mdadm --run)",
                         a->name, unexpected, unexpected == 1 ? " is" : "s are",
                         list);
  }
  return 0;
}

/* Engine resources: parity tables, the zero source, the pool. */
static int
init_runtime (struct raid_array *a, char *err, size_t errlen)
{
  const struct raid_geometry *g = &a->geo;

  a->level_ops = levels_ops;
  a->ops = levels_ops (g->level);
  if (a->ops->setup && a->ops->setup (a, err, errlen) == -1)
    return -1;
  a->pool = iopool_new (pool_threads (g->members));
  if (!a->pool)
    return array_refuse (err, errlen, "%s", strerror (ENOMEM));
  return 0;
}

/* Warn if losing one controller would fail the array. */
static void
warn_controllers (struct raid_array *a, const struct raid_config *cfg)
{
  char why[512];

  if (controllers_survive (&a->geo, cfg, NULL, why, sizeof why) == 0)
    array_log (a, RAID_LOG_WARNING, "array %s: %s", a->name, why);
}

/* Roles the superblocks still count on but that are not there are
 * written off now, so a stale copy can never come back unnoticed. */
static void
record_missing (struct raid_array *a)
{
  char list[1024];
  unsigned i;
  bool changed = false;

  list_roles (a, false, list, sizeof list);
  if (!list[0])
    return;
  array_log (a, RAID_LOG_WARNING, "array %s: running degraded: %s", a->name,
             list);
  array_event (a, RAID_EVENT_DEGRADED_ARRAY, -1, list);
  for (i = 0; i < a->geo.members; i++)
    if (a->slots[i].state == SLOT_MISSING) {
      array_record_faulty (a, i);
      changed = true;
    }
  if (changed && !a->readonly)
    array_write_superblocks (a);
}

/* Devices whose config line gave other flags than their superblock
 * (write-mostly or failfast added or dropped) carry them from now on,
 * as md takes them from sysfs. */
static void
write_flags (struct raid_array *a, const struct candidate *c, unsigned n)
{
  unsigned i;
  bool changed = false;

  for (i = 0; i < n; i++)
    changed |= c[i].placed && c[i].flags_changed;
  if (!changed || a->readonly)
    return;
  array_log (a, RAID_LOG_INFO, "array %s: the config's write-mostly and "
             "failfast flags go into the superblocks", a->name);
  array_write_superblocks (a);
}

/* The config's write-behind limit goes into the bitmap's header, as
 * mdadm --write-behind puts it there, and md reads it from there. */
static void
write_behind_limit (struct raid_array *a, const struct raid_config *cfg)
{
  behind_init (a, cfg->write_behind);
  if (!a->bitmap.present || a->bitmap.write_behind == cfg->write_behind ||
      a->readonly)
    return;
  array_log (a, RAID_LOG_INFO, "array %s: the bitmap's write-behind limit "
             "goes from %u to %u, as the config says", a->name,
             a->bitmap.write_behind, cfg->write_behind);
  a->bitmap.write_behind = cfg->write_behind;
  array_write_superblocks (a);
}

/* md's resync_offset: all ones, clean; 0, written to when it stopped
 * (dirty: resync what the bitmap marks, or all); else clean but with a
 * resync cut short there. */
static void
read_sync_state (struct raid_array *a, const struct md_superblock *ref)
{
  uint64_t unit_sectors = a->geo.unit_bytes / 512;

  a->in_sync = ref->resync_offset_sectors != 0;
  a->resync_front = ref->resync_offset_sectors == MD_RESYNC_CLEAN
    ? a->ops->sync_units (a) : ref->resync_offset_sectors / unit_sectors;
}

struct raid_array *
raid_assemble (const struct raid_config *cfg, const struct raid_options *opts,
               char *err, size_t errlen)
{
  return array_assemble (cfg, cfg, opts, err, errlen);
}

struct raid_array *
array_assemble (const struct raid_config *cfg, const struct raid_config *top,
                const struct raid_options *opts, char *err, size_t errlen)
{
  /* With nested arrays the top level's spares are shared: each nested
   * array considers them all and keeps those carrying its UUID. */
  bool pool = cfg == top && top->ngroups > 0;
  unsigned own = cfg->nmembers + (pool ? 0 : cfg->nspares);
  unsigned n = own + (cfg != top ? top->nspares : 0), i;
  struct raid_array *a = calloc (1, sizeof *a);
  struct candidate *c = calloc (n, sizeof *c);
  struct nest nest = { .top = top, .opts = opts, .parent = a };
  const struct md_superblock *ref;
  int r;

  /* Room for every role: nbdraid grow --raid-devices adds roles to a
   * running array. */
  if (!a || !c || !(a->slots = calloc (RAID_MAX_MEMBERS, sizeof *a->slots)) ||
      !(a->children = calloc (cfg->nmembers, sizeof *a->children))) {
    if (a)
      free (a->slots);
    free (a);
    free (c);
    snprintf (err, errlen, "%s", strerror (ENOMEM));
    return NULL;
  }
  stripe_locks_init (&a->locks);
  range_lock_init (&a->write_ranges);
  pthread_mutex_init (&a->sb_lock, NULL);
  pthread_rwlock_init (&a->reshape.lock, NULL);
  pthread_mutex_init (&a->reshape.busy_mutex, NULL);
  pthread_cond_init (&a->reshape.busy_cond, NULL);
  a->replacing = -1;
  a->geo.members = cfg->nmembers;
  a->readonly = a->refuse_writes = opts->readonly;
  a->direct = cfg->direct;
  a->log = opts->log;
  a->event = opts->event;
  a->log_opaque = opts->log_opaque;
  snprintf (a->name, sizeof a->name, "%s", cfg->name);
  for (i = 0; i < n; i++)
    c[i].spec = i < cfg->nmembers ? &cfg->members[i]
      : i < own ? &cfg->spares[i - cfg->nmembers] : &top->spares[i - own];
  if (candidates_open (c, n, cfg, opts, &nest)) {
    array_refuse (err, errlen, "%s", strerror (ENOMEM));
    goto fail;
  }
  if (candidates_check_distinct (c, n, err, errlen))
    goto fail;
  r = candidates_reference (c, own);
  if (r < 0) {
    array_refuse (err, errlen,
                  "array %s: no device holds a readable md "
                  "superblock (%s: %s); a new array needs 'nbdraid create "
                  "CONFIG' first",
                  a->name, c[0].spec->path, c[0].s.why);
    goto fail;
  }
  ref = &c[r].s.sb;
  snprintf (a->name, sizeof a->name, "%s", ref->set_name);
  for (i = own; i < n; i++)
    if (!c[i].s.io || memcmp (c[i].s.sb.set_uuid, ref->set_uuid, 16) != 0)
      slot_free (&c[i].s); /* free, or another nested array's */
  a->geo.members = ref->raid_disks > cfg->nmembers && raid0_growing (ref, cfg)
                       ? ref->raid_disks
                       : cfg->nmembers;
  if (check_geometry (ref, cfg, err, errlen)
      || place_devices (a, cfg, c, n, ref, err, errlen)
      || place_the_rest (a, cfg, c, n, ref))
    goto fail;

  a->geo.level = ref->level;
  a->geo.layout = sb_layout (ref);
  a->geo.chunk_bytes = (uint64_t)sb_chunk_sectors (ref) * 512;
  a->geo.member_bytes = ref->size_sectors * 512;
  if (raid_level_find (ref->level)->zoned && ref->size_sectors == 0)
    a->geo.member_bytes = raid0_member_bytes (a);
  if (geometry_init (&a->geo, err, errlen) == -1)
    goto fail;
  a->reshape.to_raid0 = raid0_growing (ref, cfg);
  reshape_mark_fresh (a, ref);
  if (check_data_areas (a, err, errlen)
      || check_startable (a, opts, err, errlen)
      || init_runtime (a, err, errlen))
    goto fail;
  reshape_settle_lagging (a, ref);
  if (reshape_load (a, ref, err, errlen) == -1)
    goto fail;
  read_sync_state (a, ref);
  a->auto_readd = cfg->auto_readd;
  a->scrub_fail_after = cfg->scrub_fail_after;
  member_options_from_config (cfg, opts->readonly, &a->member_opts);
  if (bitmap_load (a) == -1) {
    array_refuse (err, errlen, "%s", strerror (errno));
    goto fail;
  }
  a->heartbeat_ms = cfg->heartbeat_ms;
  a->read_ahead_bytes = cfg->read_ahead_bytes;
  if (array_claim (a, opts->force, err, errlen) == -1
      || assemble_consistency (a, cfg, ref, opts, err, errlen) == -1)
    goto fail;
  warn_controllers (a, cfg);
  record_missing (a);
  write_flags (a, c, n);
  write_behind_limit (a, cfg);
  if (pool && shared_spares_load (a, cfg) == -1) {
    array_refuse (err, errlen, "%s", strerror (errno));
    goto fail;
  }
  for (i = 0; i < n; i++)
    slot_free (&c[i].s);
  free (c);
  return a;

 fail:
  for (i = 0; i < n; i++)
    slot_free (&c[i].s);
  free (c);
  raid_close (a);
  return NULL;
}

/* member_ops' hurry, where the member has one. */
static void
hurry_slot (struct raid_slot *s)
{
  if (s->io && s->io->ops->hurry)
    s->io->ops->hurry (s->io, RAID_STOP_TIMEOUT_S * 1000);
}

void
raid_stopping (struct raid_array *a)
{
  unsigned i;

  if (!a)
    return;
  for (i = 0; i < a->geo.members && a->slots; i++)
    hurry_slot (&a->slots[i]);
  for (i = 0; i < a->nspares; i++)
    hurry_slot (&a->spares[i]);
  for (i = 0; i < a->nchildren; i++)
    raid_stopping (a->children[i]);
}

/* Stop the array cleanly if it ran and free it, then the arrays nested
 * in it. */
void
raid_close (struct raid_array *a)
{
  unsigned i;

  if (!a)
    return;
  /* Every behind-write lands before the clean stop. */
  behind_stop (a);
  /* md's clean stop: the write-back cache goes to the members and the
   * journal's tail moves past what they now hold (r5l_exit_log's last
   * reclaim). */
  if (a->started) {
    journal_stop (a);
    array_mark_clean (a);
  }
  array_release (a);
  /* Its fills run in the pool; the heartbeat, stopped now, may stop it. */
  read_ahead_free (&a->ra);
  iopool_free (a->pool);
  if (a->ops && a->ops->teardown)
    a->ops->teardown (a);
  if (a->reshape.active)
    reshape_codes_free (a);
  stripe_locks_destroy (&a->locks);
  range_lock_destroy (&a->write_ranges);
  pthread_mutex_destroy (&a->sb_lock);
  bitmap_free (&a->bitmap);
  ppl_close (a);
  journal_close (a);
  behind_free (a);
  job_buffers_free (&a->job_buffers);
  for (i = 0; i < a->geo.members && a->slots; i++)
    slot_free (&a->slots[i]);
  for (i = 0; i < a->nspares; i++)
    slot_free (&a->spares[i]);
  retired_close_all (&a->retired);
  /* Nested arrays last: the outer array's clean stop wrote through
   * them. */
  for (i = 0; i < a->nchildren; i++)
    raid_close (a->children[i]);
  free (a->children);
  for (i = 0; i < a->nshared; i++)
    free (a->shared[i]);
  free (a->shared);
  free (a->slots);
  free (a->spares);
  free (a);
}
