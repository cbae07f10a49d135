/* nbdraid: nbdraid grow --raid-devices N on a RAID1, mdadm's --grow
 * --raid-devices.  md's raid1_reshape(): more mirrors are empty roles
 * the array's spares then fill and recover; fewer is allowed only when
 * no more devices hold roles than the new count (-EBUSY otherwise: fail
 * and remove the mirrors to drop first), and the devices left move down
 * to roles 0..N-1 in order.  No data moves either way.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "refuse.h"
#include "reshape-start.h"

/* What the array must be: a writable, idle, whole RAID1 of its own
 * devices; and N a count md accepts for it. */
static int
check_array (struct raid_array *a, unsigned n, bool *shrink, char *err,
             size_t errlen)
{
  unsigned m, held = 0;

  if (a->geo.level != 1)
    return array_refuse (err, errlen,
                         "array %s is RAID%d: --raid-devices changes "
                         "a RAID1's mirrors or a RAID0/5/6/10's members only",
                         a->name, a->geo.level);
  if (admin_refuse_unwritable (a, err, errlen) == -1
      || admin_refuse_nested (a, "changing its members", err, errlen) == -1
      || admin_refuse_busy (a, "grow it", err, errlen) == -1)
    return -1;
  if (n == a->geo.members)
    return array_refuse (err, errlen, "array %s already has %u members",
                         a->name, n);
  /* Every role active, or (when shrinking) empty: no device in it. */
  for (m = 0; m < a->geo.members; m++) {
    enum slot_state st = slot_state (&a->slots[m]);
    held += a->slots[m].io != NULL;
    if (st == SLOT_ACTIVE || (n < a->geo.members && !a->slots[m].io))
      continue;
    return array_refuse (err, errlen,
                         "array %s is degraded (member %u is %s): "
                         "--raid-devices needs every member active%s",
                         a->name, m,
                         st == SLOT_RECOVERING ? "recovering" : "not active",
                         n < a->geo.members ? " or removed" : "");
  }
  *shrink = n < a->geo.members;
  if (*shrink && held > n)
    return array_refuse (err, errlen,
                         "array %s has %u members in use, more than %u: "
                         "fail and remove the mirrors to drop first, as "
                         "md requires",
                         a->name, held, n);
  if (!*shrink && array_usable_spares (a) < n - a->geo.members)
    return array_refuse (err, errlen,
                         "array %s needs %u spare%s, array has %u (add "
                         "them with nbdraid add first)",
                         a->name, n - a->geo.members,
                         n - a->geo.members == 1 ? "" : "s",
                         array_usable_spares (a));
  return 0;
}

/* Every superblock the array writes gets raid_disks n; dev_roles
 * renumbered by map (old role -> new role, or MD_ROLE_FAULTY for a
 * role dropped: md lists a device no longer in the array as faulty). */
static void
renumber (struct raid_array *a, unsigned n, const uint16_t *map)
{
  unsigned i, dev;

  for (i = 0; i < a->geo.members + a->nspares; i++) {
    struct md_superblock *sb = &array_slot (a, i)->sb;
    sb->raid_disks = n;
    for (dev = 0; map && dev < sb->max_dev; dev++)
      if (sb->dev_roles[dev] < a->geo.members)
        sb->dev_roles[dev] = map[sb->dev_roles[dev]];
  }
}

/* Keep n roles, as raid1_reshape: the devices move down to roles 0..
 * in order, the empty roles that remain after them; the other empty
 * roles go.  old has room for a copy of the roles.  With the array
 * quiesced and sb_lock held. */
static void
drop_roles (struct raid_array *a, unsigned n, struct raid_slot *old,
            char *changed, size_t changedlen)
{
  uint16_t map[RAID_MAX_MEMBERS];
  unsigned m, to = 0, pass;
  size_t used = 0;

  memcpy (old, a->slots, a->geo.members * sizeof *old);
  for (pass = 0; pass < 2; pass++)
    for (m = 0; m < a->geo.members; m++) {
      struct raid_slot *s = &old[m];
      if ((s->io != NULL) != (pass == 0))
        continue;
      if (to < n) {
        map[m] = (uint16_t)to;
        a->slots[to++] = *s;
        continue;
      }
      map[m] = MD_ROLE_FAULTY;
      /* The config's member line of this role goes (control plane). */
      used += (size_t)snprintf (
          changed + used, used < changedlen ? changedlen - used : 0, "%s\n",
          s->path ? s->path : RAID_MEMBER_MISSING);
      free (s->path);
      free (s->controller);
    }
  /* No stale copy of a role stays past the last. */
  memset (&a->slots[n], 0, (a->geo.members - n) * sizeof *a->slots);
  renumber (a, n, map);
}

/* Take n - members spares into the new roles, recovering from 0. */
static void
add_roles (struct raid_array *a, unsigned n, char *changed, size_t changedlen)
{
  unsigned old = a->geo.members, r;

  renumber (a, n, NULL);
  for (r = old; r < n; r++) {
    a->geo.members = r + 1;
    /* The config's spare line of this device becomes a member line. */
    array_spare_takes_role (a, r, changed, changedlen);
  }
}

/* With requests held (none inside the engine) and the array quiesced: the
 * slots, the geometry and the level's state take the new count, then the
 * superblocks (events+1) carry it before any new role is rebuilt, so a crash
 * leaves either the old array or the new one with its new roles recovering from
 * their recovery_offset. */
static int
apply (struct raid_array *a, unsigned n, char *changed, size_t changedlen,
       char *err, size_t errlen)
{
  struct raid_geometry g = a->geo;
  struct raid_slot *old = malloc (a->geo.members * sizeof *old);

  g.members = n;
  if (!old)
    return array_refuse (err, errlen, "%s", strerror (ENOMEM));
  if (geometry_init (&g, err, errlen) == -1) {
    free (old);
    return -1;
  }
  if (a->ops->teardown)
    a->ops->teardown (a);
  a->level_state = NULL;
  if (n < a->geo.members)
    drop_roles (a, n, old, changed, changedlen);
  else
    add_roles (a, n, changed, changedlen);
  free (old);
  a->geo = g;
  if (a->ops->setup && a->ops->setup (a, err, errlen) == -1)
    return -1;
  if (array_write_superblocks_locked (a) == -1)
    return admin_refuse_write_failed (a, err, errlen);
  return 0;
}

int
raid_admin_grow_devices (struct raid_array *a, const char *count, char *changed,
                         size_t changedlen, char *done, size_t donelen,
                         char *err, size_t errlen)
{
  unsigned long n;
  unsigned old = a->geo.members;
  bool shrink = false;
  char *end;
  int r;

  errno = 0;
  n = strtoul (count, &end, 10);
  if (end == count || *end || errno || count[0] == '-'
      || n < a->geo.lvl->min_members (a->geo.layout) || n > RAID_MAX_MEMBERS)
    return array_refuse (err, errlen,
                         "'%s' is not a member count for array %s (give "
                         "%u to %u)",
                         count, a->name,
                         a->geo.lvl->min_members (a->geo.layout),
                         RAID_MAX_MEMBERS);
  if (a->geo.level == 0 || a->geo.level == 5 || a->geo.level == 6
      || a->geo.level == 10)
    return raid_admin_reshape (
        a,
        &(struct reshape_target){ .level = a->geo.level,
                                  .members = (unsigned)n,
                                  .chunk_bytes = a->geo.chunk_bytes,
                                  .layout = a->geo.layout },
        changed, changedlen, done, donelen, err, errlen);
  changed[0] = '\0';
  pthread_mutex_lock (&a->sb_lock);
  r = check_array (a, (unsigned)n, &shrink, err, errlen);
  pthread_mutex_unlock (&a->sb_lock);
  if (r == -1)
    return -1;
  array_hold_requests (a);
  behind_drain (a); /* no write behind to a role that moves */
  array_quiesce (a);
  pthread_mutex_lock (&a->sb_lock);
  /* Checked again: a member may have failed, a job started. */
  r = check_array (a, (unsigned)n, &shrink, err, errlen);
  if (r == 0)
    r = apply (a, (unsigned)n, changed, changedlen, err, errlen);
  pthread_mutex_unlock (&a->sb_lock);
  array_unquiesce (a);
  array_release_requests (a);
  if (r == -1)
    return -1;
  array_log (a, RAID_LOG_INFO, "array %s: %u members now, %u before%s", a->name,
             a->geo.members, old,
             shrink ? "" : "; spares take the new roles and recover");
  snprintf (done, donelen, "array %s has %u members, %u before%s", a->name,
            a->geo.members, old,
            shrink ? "" : "; the new mirrors are being rebuilt");
  return 0;
}
