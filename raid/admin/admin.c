/* nbdraid: the admin's verbs on a running array (nbdraid status, fail,
 * remove, add, replace), modelled on mdadm's.  Each checks first and
 * changes nothing when it refuses.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "array.h"
#include "config-file.h"
#include "superblock-io.h"
#include "uri-same.h"

const char *
raid_device_state_name (enum raid_device_state state)
{
  static const char *const names[RAID_DEV_STATES] = {
    [RAID_DEV_ACTIVE] = "active", [RAID_DEV_RECOVERING] = "recovering",
    [RAID_DEV_FAULTY] = "faulty", [RAID_DEV_MISSING] = "missing",
    [RAID_DEV_SPARE] = "spare", [RAID_DEV_REPLACING] = "replacing",
  };
  return names[state];
}

/* What status calls a device: outside the roles, active is a spare and
 * recovering a replacement being built. */
static enum raid_device_state
device_state (const struct raid_array *a, const struct raid_slot *s,
              bool role)
{
  switch (slot_state (s)) {
  case SLOT_ACTIVE:
    return role ? RAID_DEV_ACTIVE : RAID_DEV_SPARE;
  case SLOT_RECOVERING:
    return role ? RAID_DEV_RECOVERING : RAID_DEV_REPLACING;
  case SLOT_FAULTY:
    return RAID_DEV_FAULTY;
  default:
    return RAID_DEV_MISSING;
  }
}

/* mdadm's "detached": a device whose path names nothing now, or
 * something else than what was opened (its identity, copied under
 * sb_lock; zeros when closed).  NBD exports and nested arrays never
 * are.  Outside sb_lock: a stat may hang on a dead mount. */
static bool
path_detached (const char *path, const uint64_t identity[2])
{
  struct stat st;

  if (!path[0] || raid_spec_is_uri (path) || raid_spec_array (path))
    return false;
  if (identity[0] || identity[1])
    return !member_identity_is (identity, path);
  return stat (path, &st) == -1 &&
    (errno == ENOENT || errno == ENXIO || errno == ENODEV);
}

/* One device's entry in the status; a nested array that has failed
 * shows as faulty. */
static void
describe (struct raid_device_status *d, const struct raid_array *a,
          const struct raid_slot *s, int role)
{
  d->role = role;
  d->state = device_state (a, s, role >= 0);
  snprintf (d->path, sizeof d->path, "%s", s->path ? s->path : "");
  snprintf (d->controller, sizeof d->controller, "%s",
            s->controller ? s->controller : "");
  snprintf (d->why, sizeof d->why, "%s", s->why);
  /* A nested array that lost too much is a dead member, even though
   * nothing failed it here (RAID0 above it has nothing to fail it to). */
  if (d->state == RAID_DEV_ACTIVE && member_array_inner (s->io) &&
      array_check_alive (member_array_inner (s->io)) == -1) {
    d->state = RAID_DEV_FAULTY;
    snprintf (d->why, sizeof d->why, "array %s has failed",
              member_array_inner (s->io)->name);
  }
  d->recovered_bytes = slot_front (s);
  d->corrected_reads = s->sb.cnt_corrected_read;
  d->mismatched_sectors = __atomic_load_n (&s->mismatched_sectors,
                                           __ATOMIC_RELAXED);
  d->events = s->sb.events;
  d->devflags = s->sb.devflags;
  d->read_ns = s->io ? __atomic_load_n (&s->io->read_ns, __ATOMIC_RELAXED) : 0;
  /* The judgement is made at reads: a device that failed since keeps
   * the last one, which no longer says anything. */
  d->slow = (d->state == RAID_DEV_ACTIVE || d->state == RAID_DEV_RECOVERING)
            && (unsigned)role < a->geo.members && a->ops->read_slow
            && a->ops->read_slow (a, (unsigned)role);
}

unsigned
raid_status_working (const struct raid_status *st)
{
  unsigned i, n = 0;

  for (i = 0; i < st->members; i++)
    n += st->dev[i].state == RAID_DEV_ACTIVE;
  return n;
}

/* Fill in the picture nbdraid status draws: the array, each device, the
 * job, the bitmap and the client requests. */
void
raid_get_status (struct raid_array *a, struct raid_status *st)
{
  uint64_t identity[2 * RAID_MAX_MEMBERS][2] = { { 0 } };
  unsigned i;

  memset (st, 0, sizeof *st);
  pthread_mutex_lock (&a->sb_lock);
  snprintf (st->name, sizeof st->name, "%s", a->name);
  md_uuid_format (array_reference (a)->sb.set_uuid, st->uuid);
  st->level = a->geo.level;
  st->layout = a->geo.layout;
  st->chunk_bytes = a->geo.lvl->has_chunk ? a->geo.chunk_bytes : 0;
  st->members = a->geo.members;
  st->array_bytes = raid_size (a);
  st->member_bytes = a->geo.member_bytes;
  st->failed = array_check_alive (a) == -1;
  st->synced = __atomic_load_n (&a->resync_front, __ATOMIC_ACQUIRE) >=
    a->ops->sync_units (a);
  st->clean = array_resync_offset (a) == MD_RESYNC_CLEAN;
  st->readonly = raid_readonly (a);
  st->events = array_reference (a)->sb.events;
  /* md keeps the seconds in the low 40 bits. */
  st->ctime = array_reference (a)->sb.ctime & ((1ULL << 40) - 1);
  st->utime = array_reference (a)->sb.utime & ((1ULL << 40) - 1);
  for (i = 0; i < a->geo.members + a->nspares; i++) {
    const struct raid_slot *s = array_slot (a, i);
    /* A role a shrink drops is one until the reshape ends. */
    describe (&st->dev[st->ndevices++], a, s,
              i < a->geo.members + reshape_leaving (a) ? (int) i : -1);
    st->failed |= i < a->geo.members && a->geo.tolerates == 0 &&
      st->dev[i].state != RAID_DEV_ACTIVE;
    if (s->io)
      memcpy (identity[i], s->io->identity, sizeof identity[i]);
  }
  if (a->reshape.active) {
    st->reshape_from.active = true;
    st->reshape_from.members = a->reshape.old.members;
    st->reshape_from.layout = a->reshape.old.layout;
    st->reshape_from.chunk_bytes = a->reshape.old.chunk_bytes;
  }
  st->job_target = a->job.kind == RAID_JOB_RECOVERY ||
    a->job.kind == RAID_JOB_REPLACE ? (int) a->job.target : -1;
  if (a->job.kind == RAID_JOB_CHECK || a->job.kind == RAID_JOB_REPAIR) {
    st->mismatches = a->job.mismatches;
    st->unlocated = __atomic_load_n (&a->job.unlocated, __ATOMIC_RELAXED);
  }
  else {
    st->mismatches = a->last_mismatches;
    st->unlocated = a->last_unlocated;
  }
  st->last_work_bytes = a->last_work_bytes;
  pthread_mutex_unlock (&a->sb_lock);
  for (i = 0; i < st->ndevices; i++)
    st->dev[i].detached = path_detached (st->dev[i].path, identity[i]);
  array_requests (a, &st->requests);
  st->policy = a->geo.lvl->tolerates (a->geo.layout, a->geo.members) == 0
                   ? "none"
               : a->ppl.on         ? "ppl"
               : a->journal.on     ? "journal"
               : a->bitmap.present ? "bitmap"
                                   : "resync";
  journal_status (a, st);
  behind_status (a, &st->behind_limit, &st->behind_writes, &st->behind_slots);
  if (a->bitmap.present) {
    st->bitmap_chunk_bytes = a->bitmap.chunk_bytes;
    st->bitmap_chunks = a->bitmap.chunks;
    st->bitmap_dirty = bitmap_count_dirty (a);
  }
  raid_job_progress (a, &st->job, &st->job_done, &st->job_total);
}

/* Does slot s hold the device path names, by whatever name it is given
 * (a relative spelling, a symlink, /dev/disk/by-id/... for /dev/sdb; an
 * NBD URI spelt another way, as uri_same has it)? */
static bool
slot_is (const struct raid_slot *s, const char *path)
{
  if (!s->path)
    return false;
  if (strcmp (s->path, path) == 0)
    return true;
  if (raid_spec_is_uri (path) || raid_spec_is_uri (s->path))
    return uri_same (s->path, path);
  return s->io ? member_is (s->io, path) : config_same_path (s->path, path);
}

/* MEMBER: a role number, or a device's path (or URI).  Returns the op
 * index (role, or members + spare), or -1. */
static int
find_device (struct raid_array *a, const char *member)
{
  char *end;
  unsigned long role = strtoul (member, &end, 10);
  unsigned i;

  if (end != member && *end == '\0')
    return role < a->geo.members + reshape_leaving (a) ? (int) role : -1;
  for (i = 0; i < a->geo.members + a->nspares; i++)
    if (slot_is (array_slot (a, i), member))
      return (int) i;
  return -1;
}

/* Refuse a MEMBER that names no role or device of the array. */
static int
no_such (struct raid_array *a, const char *member, char *err, size_t errlen)
{
  return array_refuse (err, errlen,
                       "array %s has no member %s (give a role "
                       "number from 0 to %u or a device's path as in nbdraid "
                       "status)",
                       a->name, member, a->geo.members - 1);
}

/* Does a reshaping array keep all its data without role i too, in
 * both geometries? */
static bool
reshape_survives (struct raid_array *a, unsigned i)
{
  struct member_set gone;
  bool ok = reshape_gone (a, false, &gone) == 0;

  member_set_add (&gone, i);
  ok = ok && member_set_count (&gone) <= a->reshape.old.parity_members;
  if (reshape_gone (a, true, &gone) == -1)
    return false;
  if (i < a->geo.members)
    member_set_add (&gone, i);
  return ok && member_set_count (&gone) <= a->geo.parity_members;
}

/* Fail a device in use (mdadm --fail); unless forced, not one whose
 * loss would take data with it. */
int
raid_admin_fail (struct raid_array *a, const char *member, bool force,
                 char *err, size_t errlen)
{
  int i = find_device (a, member);
  struct member_set gone;
  enum slot_state st;

  if (i < 0)
    return no_such (a, member, err, errlen);
  if (a->readonly)
    return array_refuse (err, errlen, "array %s is read-only", a->name);
  st = slot_state (array_slot (a, (unsigned) i));
  if (st != SLOT_ACTIVE && st != SLOT_RECOVERING)
    return array_refuse (err, errlen, "%s is not in use (already %s)", member,
                         st == SLOT_FAULTY ? "faulty" : "missing");
  if (i < (int) a->geo.members && !a->reshape.active) {
    array_unavailable (a, &gone);
    member_set_add (&gone, (unsigned) i);
    if (!array_alive_without (a, &gone) && !force)
      return array_refuse (err, errlen,
                           "failing member %d (%s) would leave "
                           "array %s without some of its data; add --force to "
                           "fail it anyway",
                           i, a->slots[i].path, a->name);
  }
  /* Mid-reshape, the data not moved yet lives in the old geometry. */
  if (i < (int) (a->geo.members + reshape_leaving (a)) && a->reshape.active
      && !force && !reshape_survives (a, (unsigned) i))
    return array_refuse (err, errlen,
                         "failing member %d (%s) would leave array %s "
                         "without some of its data mid-reshape; add --force "
                         "to fail it anyway",
                         i, array_slot (a, (unsigned) i)->path, a->name);
  array_fail_member (a, (unsigned) i, "failed by the admin");
  return 0;
}

/* Take a device not in use out of the array (mdadm --remove): a role's
 * leaves the role missing, any other leaves the list. */
int
raid_admin_remove (struct raid_array *a, const char *member, char *removed,
                   size_t removedlen, char *err, size_t errlen)
{
  int i = find_device (a, member);
  struct raid_slot *s;
  enum slot_state st;
  unsigned j;

  if (i < 0)
    return no_such (a, member, err, errlen);
  s = array_slot (a, (unsigned) i);
  st = slot_state (s);
  if (i < (int) a->geo.members && (st == SLOT_ACTIVE ||
                                   st == SLOT_RECOVERING))
    return array_refuse (err, errlen, "member %d (%s) is in use: fail it first",
                         i, s->path);
  if (i >= (int) a->geo.members
      && i < (int) (a->geo.members + reshape_leaving (a)))
    return array_refuse (err, errlen,
                         "%s holds a role the reshape under way drops: "
                         "remove it when the reshape is done",
                         s->path);
  if (i >= (int) a->geo.members && st == SLOT_RECOVERING)
    return array_refuse (err, errlen,
                         "%s is being rebuilt as a replacement; "
                         "fail it first",
                         s->path);
  if (i < (int) a->geo.members && !s->io)
    return array_refuse (err, errlen, "member %d has no device to remove", i);
  snprintf (removed, removedlen, "%s", s->path);
  array_quiesce (a);
  pthread_mutex_lock (&a->sb_lock);
  retired_add (&a->retired, s->io);
  s->io = NULL;
  if (i < (int) a->geo.members) {
    s->state = SLOT_MISSING;
    snprintf (s->why, sizeof s->why, "removed by the admin");
  }
  else {
    free (s->path);
    free (s->controller);
    for (j = (unsigned) i - a->geo.members; j + 1 < a->nspares; j++)
      a->spares[j] = a->spares[j + 1];
    a->nspares--;
  }
  pthread_mutex_unlock (&a->sb_lock);
  array_unquiesce (a);
  /* Let the device go now if no request holds it, as an admin who
   * detaches it next expects; else the maintenance tick will. */
  retired_reclaim (&a->retired);
  array_log (a, RAID_LOG_INFO, "array %s: removed %s", a->name, member);
  return 0;
}

/* A device number no device of the array uses. */
static int
free_dev_number (const struct raid_array *a, const struct md_superblock *ref)
{
  uint32_t dev;
  unsigned i;

  for (dev = 0; dev < ref->max_dev; dev++) {
    bool used = ref->dev_roles[dev] < MD_ROLE_MAX
                || ref->dev_roles[dev] == MD_ROLE_JOURNAL;
    for (i = 0; i < a->geo.members + a->nspares && !used; i++) {
      const struct raid_slot *s = array_slot ((struct raid_array *) a, i);
      used = s->io && s->sb.dev_number == dev;
    }
    if (!used)
      return (int) dev;
  }
  return -1;
}

int
raid_admin_add (struct raid_array *a, const char *path, char *err,
                size_t errlen)
{
  const struct md_superblock *ref = &array_reference (a)->sb;
  struct member_open_options mo = { .nbd_connections = 2,
    .nbd_timeout_s = RAID_NBD_TIMEOUT_S,
    .connect_timeout_s = RAID_NBD_CONNECT_TIMEOUT_S };
  struct member *m = NULL, *all[2 * RAID_MAX_MEMBERS + 1];
  struct raid_slot *s;
  struct md_superblock *sb = NULL;
  uint64_t need;
  unsigned i, n = 0, x, y;
  bool none;
  int dev, r = -1;
  char why[256];

  if (a->readonly)
    return array_refuse (err, errlen, "array %s is read-only", a->name);
  dev = find_device (a, path);
  if (dev >= 0 && !array_slot (a, (unsigned)dev)->io)
    return array_refuse (err, errlen,
                         "%s was removed from role %d of array %s: nbdraid "
                         "re-add puts it back",
                         path, dev, a->name);
  if (dev >= 0)
    return array_refuse (err, errlen, "%s is already in array %s", path,
                         a->name);
  if (a->nspares == RAID_MAX_MEMBERS)
    return array_refuse (err, errlen, "array %s has too many spares", a->name);
  mo.direct = a->direct;
  m = member_open (path, &mo, err, errlen);
  if (!m)
    return -1;
  for (i = 0; i < a->geo.members + a->nspares; i++)
    if (array_slot (a, i)->io)
      all[n++] = array_slot (a, i)->io;
  all[n++] = m;
  need = ref->data_offset_sectors * 512 + a->geo.member_bytes;
  sb = malloc (sizeof *sb);
  if (!sb) {
    array_refuse (err, errlen, "%s", strerror (ENOMEM));
    goto out;
  }
  if (member_find_duplicate (all, n, &x, &y)) {
    array_refuse (err, errlen, "%s is already in array %s (as %s)", path,
                  a->name, array_slot (a, x)->path);
    goto out;
  }
  if (m->size_bytes < need) {
    array_refuse (err, errlen,
                  "%s is too small: %" PRIu64 " bytes, array %s needs "
                  "%" PRIu64,
                  path, m->size_bytes, a->name, need);
    goto out;
  }
  if (md_sb_read (m, sb, &none, why, sizeof why) == 0 || !none) {
    array_refuse (err, errlen,
                  "%s already holds an md superblock (array '%s'); "
                  "wipe it before adding it",
                  path, sb->set_name);
    goto out;
  }
  pthread_mutex_lock (&a->sb_lock);
  dev = free_dev_number (a, ref);
  if (dev < 0) {
    pthread_mutex_unlock (&a->sb_lock);
    array_refuse (err, errlen, "array %s has no free device number", a->name);
    goto out;
  }
  *sb = *ref;
  sb->dev_number = (uint32_t) dev;
  while (getrandom (sb->device_uuid, 16, 0) != 16)
    ;
  sb->data_size_sectors = (m->size_bytes - ref->data_offset_sectors * 512) / 512;
  sb->feature_map &= ~MD_FEATURE_RECOVERY_OFFSET;
  sb->recovery_offset_sectors = 0;
  sb->cnt_corrected_read = 0;
  sb->devflags = 0;
  s = &a->spares[a->nspares];
  memset (s, 0, sizeof *s);
  s->io = m;
  s->path = strdup (path);
  s->sb = *sb;
  s->data_offset_bytes = sb->data_offset_sectors * 512;
  s->state = SLOT_ACTIVE;
  for (i = 0; i < a->geo.members; i++)
    a->slots[i].sb.dev_roles[dev] = MD_ROLE_SPARE;
  for (i = 0; i < a->nspares; i++)
    a->spares[i].sb.dev_roles[dev] = MD_ROLE_SPARE;
  s->sb.dev_roles[dev] = MD_ROLE_SPARE;
  a->nspares++;
  m = NULL;
  r = array_write_superblocks_locked (a);
  pthread_mutex_unlock (&a->sb_lock);
  array_log (a, RAID_LOG_INFO, "array %s: added %s as a spare", a->name,
             path);
 out:
  member_close (m);
  free (sb);
  return r;
}

int
raid_admin_replace (struct raid_array *a, const char *member,
                    const char *with, char *err, size_t errlen)
{
  int i = find_device (a, member), spare = -1;
  unsigned j;

  if (i < 0 || i >= (int) a->geo.members)
    return i < 0 ? no_such (a, member, err, errlen)
                 : array_refuse (err, errlen, "%s is a spare, not a member",
                                 member);
  if (a->readonly)
    return array_refuse (err, errlen, "array %s is read-only", a->name);
  if (slot_state (&a->slots[i]) != SLOT_ACTIVE)
    return array_refuse (err, errlen,
                         "member %d (%s) is not active; a spare "
                         "rebuilds it by itself",
                         i, a->slots[i].path);
  if (a->job.kind != RAID_JOB_NONE)
    return array_refuse (err, errlen,
                         "array %s is busy with a %s; replace it "
                         "later",
                         a->name, raid_job_name (a->job.kind));
  if (with) {
    if (raid_admin_add (a, with, err, errlen) == -1)
      return -1;
    spare = (int) a->nspares - 1;
  }
  else
    for (j = 0; j < a->nspares && spare < 0; j++)
      if (slot_state (&a->spares[j]) == SLOT_ACTIVE)
        spare = (int) j;
  if (spare < 0)
    return array_refuse (err, errlen,
                         "array %s has no spare to replace member %d "
                         "with: give one with --with PATH",
                         a->name, i);
  array_start_replace (a, (unsigned) i, (unsigned) spare);
  return 0;
}

/* The device a re-add names: a role's, or one outside the roles. */
static int
find_readd (struct raid_array *a, const char *member, char **path)
{
  int i = find_device (a, member);

  if (i < 0)
    return -1;
  *path = array_slot (a, (unsigned) i)->path;
  return i;
}

int
raid_admin_readd (struct raid_array *a, const char *member, char *err,
                  size_t errlen)
{
  struct md_superblock *sb = NULL;
  struct member *m = NULL;
  struct raid_slot *slot, *ref = array_reference (a);
  char *found, path[256], why[256];
  unsigned r, j;
  int i = find_readd (a, member, &found);
  bool none, partial;
  int ret = -1;

  if (i < 0 || !found)
    return no_such (a, member, err, errlen);
  snprintf (path, sizeof path, "%s", found);    /* its slot may go */
  if (a->readonly)
    return array_refuse (err, errlen, "array %s is read-only", a->name);
  if (slot_state (array_slot (a, (unsigned) i)) == SLOT_ACTIVE ||
      slot_state (array_slot (a, (unsigned) i)) == SLOT_RECOVERING)
    return array_refuse (err, errlen, "%s is in use already", path);
  sb = malloc (sizeof *sb);
  m = sb ? member_open (path, &a->member_opts, err, errlen) : NULL;
  if (!m)
    goto out;
  if (md_sb_read (m, sb, &none, why, sizeof why) == -1) {
    array_refuse (err, errlen,
                  "%s has no usable superblock (%s); add it as a new "
                  "spare instead",
                  path, why);
    goto out;
  }
  r = md_sb_role (sb);
  if (memcmp (sb->set_uuid, ref->sb.set_uuid, 16) != 0) {
    char theirs[36], ours[36];
    md_uuid_format (sb->set_uuid, theirs);
    md_uuid_format (ref->sb.set_uuid, ours);
    array_refuse (err, errlen,
                  "%s belongs to another array (%s, '%s'), not to "
                  "array %s (%s)",
                  path, theirs, sb->set_name, a->name, ours);
    goto out;
  }
  if (r >= a->geo.members) {
    array_refuse (err, errlen,
                  "%s held no role in array %s (role 0x%x): add it "
                  "as a spare instead",
                  path, a->name, r);
    goto out;
  }
  slot = &a->slots[r];
  if (sb->data_offset_sectors * 512 + a->geo.member_bytes > m->size_bytes) {
    array_refuse (err, errlen,
                  "%s is too small for array %s now: %" PRIu64 " bytes", path,
                  a->name, m->size_bytes);
    goto out;
  }
  if (slot_state (slot) == SLOT_ACTIVE || slot_state (slot) == SLOT_RECOVERING) {
    array_refuse (err, errlen, "role %u of array %s is held by %s already", r,
                  a->name, slot->path);
    goto out;
  }
  /* md: with a bitmap cleared no later than the device dropped out,
   * the bits say everything it missed. */
  partial = a->bitmap.present && sb->events >= a->bitmap.events_cleared;
  array_quiesce (a);
  pthread_mutex_lock (&a->sb_lock);
  retired_add (&a->retired, slot->io);
  for (j = 0; j < a->nspares; j++)
    if (a->spares[j].path && strcmp (a->spares[j].path, path) == 0) {
      retired_add (&a->retired, a->spares[j].io);
      free (a->spares[j].path);
      free (a->spares[j].controller);
      memmove (&a->spares[j], &a->spares[j + 1],
               (a->nspares - j - 1) * sizeof *a->spares);
      a->nspares--;
      break;
    }
  free (slot->path);
  slot->path = strdup (path);
  slot->io = m;
  m = NULL;
  memcpy (sb->dev_roles, ref->sb.dev_roles, sizeof sb->dev_roles);
  sb->max_dev = ref->sb.max_dev;
  slot->sb = *sb;
  slot->data_offset_bytes = sb->data_offset_sectors * 512;
  slot->front = 0;
  slot->partial = partial;
  slot->why[0] = '\0';
  ppl_member_joins (a, r);
  for (j = 0; j < a->geo.members; j++)
    a->slots[j].sb.dev_roles[sb->dev_number] = r;
  for (j = 0; j < a->nspares; j++)
    a->spares[j].sb.dev_roles[sb->dev_number] = r;
  __atomic_store_n (&slot->state, SLOT_RECOVERING, __ATOMIC_RELEASE);
  ret = array_write_superblocks_locked (a);
  pthread_mutex_unlock (&a->sb_lock);
  array_unquiesce (a);
  array_log (a, RAID_LOG_INFO, "array %s: re-added %s as member %u: %s",
             a->name, slot->path, r, partial ? "recovering what the bitmap "
             "marks" : "full recovery (no usable bitmap)");
 out:
  member_close (m);
  free (sb);
  return ret;
}

unsigned
raid_children (struct raid_array *a, struct raid_array **out, unsigned max)
{
  unsigned i;

  for (i = 0; i < a->nchildren && i < max; i++)
    out[i] = a->children[i];
  return a->nchildren;
}

struct raid_array *
raid_find_array (struct raid_array *a, const char *name)
{
  struct raid_array *found = NULL;
  unsigned i;

  if (strcmp (a->name, name) == 0)
    return a;
  for (i = 0; i < a->nchildren && !found; i++)
    found = raid_find_array (a->children[i], name);
  return found;
}

struct raid_array *
raid_array_holding (struct raid_array *a, const char *path)
{
  struct raid_array *found = NULL;
  unsigned i;

  for (i = 0; i < a->geo.members + a->nspares; i++)
    if (slot_is (array_slot (a, i), path))
      return a;
  for (i = 0; i < a->nchildren && !found; i++)
    found = raid_array_holding (a->children[i], path);
  return found;
}

/* The array's name, as its superblocks give it. */
const char *
raid_name (const struct raid_array *a)
{
  return a->name;
}

unsigned
raid_members (const struct raid_array *a)
{
  return a->geo.members;
}
