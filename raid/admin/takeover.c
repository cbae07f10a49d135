/* nbdraid: nbdraid grow --level, the level changes md makes without
 * moving data ("takeover", md's level ->takeover()): a 2-member RAID1
 * becomes a 2-member RAID5 (raid5_takeover_raid1) and back
 * (raid1_takeover), since a 2-disk RAID5's parity is a copy of its one
 * data chunk, at the same offset, on either disk; a RAID5 becomes a
 * RAID6 of one more member with the -6 layout, Q on the new last
 * member, which alone is built (raid6_takeover), and back, the Q disk
 * left as a spare (raid5_takeover_raid6); a RAID0 becomes a RAID4 or a
 * parity-last RAID5 of one more member, parity on the new last member,
 * which alone is built (raid45_takeover_raid0), and back, the parity
 * disk left as a spare (raid0_takeover_raid45); a RAID0 becomes a
 * near-2 RAID10 of twice as many members and back (takeover-mirrors.c).
 * The superblocks get the new level, layout, chunk and roles (events+1)
 * and the level's request paths are swapped with no request inside the
 * engine.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "refuse.h"
#include "takeover.h"

/* raid5_takeover_raid1: two members; left-symmetric; the chunk 64K,
 * halved until the array is a whole number of chunks, at least a
 * stripe page (4K). */
static int
raid1_to_raid5 (const struct raid_array *a, struct raid_geometry *g, char *err,
                size_t errlen)
{
  uint64_t chunk = 64 * 1024;

  if (a->geo.members != 2)
    return array_refuse (err, errlen,
                         "array %s has %u members: md takes a RAID1 to "
                         "RAID5 with 2 members only (grow --raid-devices 2 "
                         "first)",
                         a->name, a->geo.members);
  while (chunk >= RAID_MIN_CHUNK_BYTES && a->geo.array_bytes % chunk)
    chunk /= 2;
  if (chunk < RAID_MIN_CHUNK_BYTES)
    return array_refuse (err, errlen,
                         "array %s: its size (%" PRIu64 " bytes) is not a "
                         "multiple of 4K, so no RAID5 chunk fits it",
                         a->name, a->geo.array_bytes);
  g->level = 5;
  g->layout = LAYOUT_LEFT_SYMMETRIC;
  g->chunk_bytes = chunk;
  return 0;
}

/* raid1_takeover: a RAID5 of two members, any layout or chunk. */
static int
raid5_to_raid1 (const struct raid_array *a, struct raid_geometry *g, char *err,
                size_t errlen)
{
  if (a->geo.members != 2)
    return array_refuse (err, errlen,
                         "array %s has %u members: md takes a RAID5 to "
                         "RAID1 with 2 members only",
                         a->name, a->geo.members);
  g->level = 1;
  g->layout = 0;
  g->chunk_bytes = 0;
  return 0;
}

/* A spare that fits, for the new last role (what), or -1 refused. */
static int
need_spare (const struct raid_array *a, const char *what, char *err,
            size_t errlen)
{
  if (array_usable_spares (a) == 0)
    return array_refuse (err, errlen,
                         "array %s needs 1 spare for the %s, array has 0 "
                         "(add one with nbdraid add first)",
                         a->name, what);
  return 0;
}

/* raid6_takeover: a RAID5 of 3 or more members gains a Q disk, the
 * last, from the spares; its layout is the same one with -6 (md has no
 * parity-last-6: parity-last has Q last already), so only the Q disk
 * is built (a recovery of its role). */
static int
raid5_to_raid6 (const struct raid_array *a, struct raid_geometry *g, char *err,
                size_t errlen)
{
  if (a->geo.members < 3)
    return array_refuse (err, errlen,
                         "array %s has %u members: md takes a RAID5 of 3 or "
                         "more to RAID6",
                         a->name, a->geo.members);
  if (need_spare (a, "Q disk", err, errlen) == -1)
    return -1;
  g->level = 6;
  if (g->layout != LAYOUT_PARITY_N)
    g->layout += LAYOUT_RAID6_OFFSET;
  g->members++;
  return 0;
}

/* raid5_takeover_raid6: a RAID6 whose Q is on its last member (a -6
 * layout) drops it and is the RAID5 of the same layout; the device
 * that held Q becomes a spare, as md leaves it. */
static int
raid6_to_raid5 (const struct raid_array *a, struct raid_geometry *g, char *err,
                size_t errlen)
{
  char name[64], six[64];

  if (a->geo.layout < LAYOUT_RAID6_OFFSET && a->geo.layout != LAYOUT_PARITY_N)
    return array_refuse (
        err, errlen,
        "array %s has layout %s, its Q rotating: md takes "
        "only a -6 layout or parity-last (Q on the last member) to RAID5 "
        "(grow --layout %s first)",
        a->name, raid_layout_name (6, a->geo.layout, name, sizeof name),
        raid_layout_name (6, a->geo.layout + LAYOUT_RAID6_OFFSET, six,
                          sizeof six));
  if (a->nspares == RAID_MAX_MEMBERS)
    return array_refuse (err, errlen,
                         "array %s has too many spares to take its Q disk "
                         "as one",
                         a->name);
  g->level = 5;
  if (g->layout != LAYOUT_PARITY_N)
    g->layout -= LAYOUT_RAID6_OFFSET;
  g->members--;
  return 0;
}

/* raid45_takeover_raid0: a RAID0 (of one zone: assembly serves no
 * other) gains a parity disk, the last, from the spares; with the
 * parity there every data chunk stays where it is, so only the parity
 * disk is built.  md's takeover leaves the role missing and its
 * recovery takes a spare; here the spare is asked for first, as for
 * the Q disk. */
static int
raid0_to_parity (const struct raid_array *a, struct raid_geometry *g, int level,
                 char *err, size_t errlen)
{
  if (need_spare (a, "parity disk", err, errlen) == -1)
    return -1;
  g->level = level;
  g->layout = LAYOUT_PARITY_N;
  g->members++;
  return 0;
}

static int
raid0_to_raid4 (const struct raid_array *a, struct raid_geometry *g, char *err,
                size_t errlen)
{
  return raid0_to_parity (a, g, 4, err, errlen);
}

static int
raid0_to_raid5 (const struct raid_array *a, struct raid_geometry *g, char *err,
                size_t errlen)
{
  return raid0_to_parity (a, g, 5, err, errlen);
}

/* raid0_takeover_raid45: a RAID4, or a parity-last RAID5, drops its
 * parity disk, the last, and is the RAID0 of the rest; the device that
 * held parity becomes a spare (mdadm fails it first, md wants the role
 * missing).  The other members must all be there (check_array). */
static int
parity_to_raid0 (const struct raid_array *a, struct raid_geometry *g, char *err,
                 size_t errlen)
{
  char name[64];

  if (a->geo.level == 5 && a->geo.layout != LAYOUT_PARITY_N)
    return array_refuse (
        err, errlen,
        "array %s has layout %s, its parity rotating: md takes only a "
        "parity-last RAID5 to RAID0 (grow --layout parity-last first)",
        a->name, raid_layout_name (5, a->geo.layout, name, sizeof name));
  if (a->bitmap.present || a->journal.on)
    return array_refuse (
        err, errlen,
        "array %s keeps a %s, which md's RAID0 cannot, "
        "and changing its consistency policy is not "
        "supported",
        a->name, a->bitmap.present ? "write-intent bitmap" : "write journal");
  if (a->nspares == RAID_MAX_MEMBERS)
    return array_refuse (err, errlen,
                         "array %s has too many spares to take its parity "
                         "disk as one",
                         a->name);
  g->level = 0;
  g->layout = 0;
  g->members--;
  return 0;
}

/* raid5_takeover on a RAID4: the same placement, as RAID5 parity-last. */
static int
raid4_to_raid5 (const struct raid_array *a, struct raid_geometry *g, char *err,
                size_t errlen)
{
  g->level = 5;
  g->layout = LAYOUT_PARITY_N;
  return 0;
}

/* raid4_takeover: a parity-last RAID5 is a RAID4 (mdadm's layout 0). */
static int
raid5_to_raid4 (const struct raid_array *a, struct raid_geometry *g, char *err,
                size_t errlen)
{
  char name[64];

  if (a->geo.layout != LAYOUT_PARITY_N)
    return array_refuse (
        err, errlen,
        "array %s has layout %s, its parity rotating: md takes only a "
        "parity-last RAID5 to RAID4 (grow --layout parity-last first)",
        a->name, raid_layout_name (5, a->geo.layout, name, sizeof name));
  g->level = 4;
  g->layout = 0;
  return 0;
}

/* A RAID4/5 going to RAID0 may miss its parity disk, the last: md
 * wants it so. */
static bool
parity_may_miss (const struct raid_array *a, unsigned m)
{
  return m == a->geo.members - 1 && slot_state (&a->slots[m]) == SLOT_MISSING;
}

#define TAKEOVER(f, t, fn, sh) .from = f, .to = t, .md = fn, .shape = sh
static const struct takeover takeovers[] = {
  { TAKEOVER (1, 5, "raid5_takeover_raid1", raid1_to_raid5) },
  { TAKEOVER (5, 1, "raid1_takeover", raid5_to_raid1) },
  { TAKEOVER (5, 6, "raid6_takeover", raid5_to_raid6) },
  { TAKEOVER (6, 5, "raid5_takeover_raid6", raid6_to_raid5) },
  { TAKEOVER (0, 4, "raid45_takeover_raid0", raid0_to_raid4) },
  { TAKEOVER (0, 5, "raid45_takeover_raid0", raid0_to_raid5) },
  { TAKEOVER (4, 0, "raid0_takeover_raid45", parity_to_raid0),
    .may_miss = parity_may_miss },
  { TAKEOVER (5, 0, "raid0_takeover_raid45", parity_to_raid0),
    .may_miss = parity_may_miss },
  { TAKEOVER (4, 5, "raid5_takeover", raid4_to_raid5) },
  { TAKEOVER (5, 4, "raid4_takeover", raid5_to_raid4) },
  { TAKEOVER (0, 10, "raid10_takeover_raid0", raid0_to_raid10),
    .move_roles = mirror_roles },
  { TAKEOVER (10, 0, "raid0_takeover_raid10", raid10_to_raid0),
    .may_miss = raid10_half_may_miss, .move_roles = unmirror_roles },
};
#undef TAKEOVER

/* What the array must be: writable, whole (but for the roles the
 * change may miss), idle, synced, of its own devices, with no
 * write-mostly copy (RAID5 has none). */
static int
check_array (struct raid_array *a, const struct takeover *t, char *err,
             size_t errlen)
{
  unsigned m;

  if (admin_refuse_unwritable (a, err, errlen) == -1
      || admin_refuse_nested (a, "changing its level", err, errlen) == -1)
    return -1;
  for (m = 0; m < a->geo.members; m++) {
    if (t->may_miss && t->may_miss (a, m))
      continue;
    if (slot_state (&a->slots[m]) != SLOT_ACTIVE)
      return array_refuse (err, errlen,
                           "array %s is degraded (member %u is %s): a "
                           "level change needs every member active",
                           a->name, m,
                           slot_state (&a->slots[m]) == SLOT_RECOVERING
                               ? "recovering"
                               : "not active");
    if (a->slots[m].sb.devflags & RAID_DEVFLAG_WRITE_MOSTLY)
      return array_refuse (err, errlen,
                           "member %u (%s) of array %s is write-mostly: "
                           "drop write-mostly from its config line and "
                           "restart first",
                           m, a->slots[m].path, a->name);
  }
  if (admin_refuse_busy (a, "change its level", err, errlen) == -1)
    return -1;
  if (a->behind.max)
    return array_refuse (err, errlen,
                         "array %s has write-behind %u: set write-behind = 0 "
                         "and restart first",
                         a->name, a->behind.max);
  return 0;
}

/* The superblocks say the new level, layout, chunk and member count. */
static void
write_shape (struct raid_array *a)
{
  unsigned i;

  for (i = 0; i < a->geo.members + a->nspares; i++) {
    struct md_superblock *sb = &array_slot (a, i)->sb;
    sb->level = a->geo.level;
    sb->layout = a->geo.layout;
    sb->chunk_sectors = (uint32_t)(a->geo.chunk_bytes / 512);
    sb->raid_disks = a->geo.members;
    /* md's RAID0 may record none; every other level needs it. */
    sb->size_sectors = a->geo.member_bytes / 512;
  }
}

/* RAID6 to RAID5, RAID4/5 to RAID0: the old last role, Q or the parity
 * disk (now at a->geo.members), becomes a spare, in every superblock;
 * a role no device held just goes (its config line said missing). */
static void
drop_last_role (struct raid_array *a, char *changed, size_t changedlen)
{
  struct raid_slot *q = &a->slots[a->geo.members];
  uint32_t dev = q->sb.dev_number;
  unsigned i;

  if (!q->io) {
    snprintf (changed, changedlen, "%s\n", RAID_MEMBER_MISSING);
    free (q->path); /* a removed device's, kept for the picture */
    free (q->controller);
    memset (q, 0, sizeof *q);
    return;
  }
  snprintf (changed, changedlen, "%s\n", q->path);
  a->spares[a->nspares++] = *q;
  memset (q, 0, sizeof *q);
  for (i = 0; i < a->geo.members + a->nspares; i++) {
    struct md_superblock *sb = &array_slot (a, i)->sb;
    if (dev < sb->max_dev)
      sb->dev_roles[dev] = MD_ROLE_SPARE;
  }
}

/* With no request inside the engine, the array quiesced and sb_lock
 * held (the heartbeat reads the roles): the new request paths,
 * geometry and level state, then the superblocks (events+1).  A crash
 * before those are all written leaves members one event apart:
 * assembly takes the freshest as the reference, and either shape holds
 * the same bytes (a Q or parity disk not yet built is recovering). */
static int
apply (struct raid_array *a, const struct takeover *t,
       const struct raid_geometry *g, char *changed, size_t changedlen,
       char *err, size_t errlen)
{
  const struct raid_level_ops *old_ops = a->ops;
  struct raid_geometry old = a->geo;

  if (a->ops->teardown)
    a->ops->teardown (a);
  a->geo = *g;
  a->ops = a->level_ops (g->level);
  if (a->ops->setup && a->ops->setup (a, err, errlen) == -1) {
    a->geo = old;
    a->ops = old_ops;
    if (a->ops->setup && a->ops->setup (a, err, errlen) == -1)
      array_log (a, RAID_LOG_ERROR, "array %s: %s", a->name, err);
    return -1;
  }
  /* It was in sync: it is, in the new level's units. */
  __atomic_store_n (&a->resync_front, a->ops->sync_units (a), __ATOMIC_RELEASE);
  if (t->move_roles)
    t->move_roles (a, &old, changed, changedlen);
  else if (g->members > old.members) /* Q or parity: a spare, rebuilt */
    array_spare_takes_role (a, a->geo.members - 1, changed, changedlen);
  else if (g->members < old.members)
    drop_last_role (a, changed, changedlen);
  write_shape (a);
  if (array_write_superblocks_locked (a) == -1)
    return admin_refuse_write_failed (a, err, errlen);
  return 0;
}

int
raid_admin_takeover (struct raid_array *a, const char *level, char *changed,
                     size_t changedlen, char *done, size_t donelen, char *err,
                     size_t errlen)
{
  const struct raid_level *l = raid_level_parse (level);
  const struct takeover *t = NULL;
  struct raid_geometry g = a->geo;
  int old = a->geo.level, r;
  size_t i;

  changed[0] = '\0';
  if (!l)
    return array_refuse (err, errlen,
                         "'%s' is not a level (0, 1, 4, 5, 6, 10, or raid5...)",
                         level);
  if (l->md_level == a->geo.level)
    return array_refuse (err, errlen, "array %s is RAID%d already", a->name,
                         a->geo.level);
  for (i = 0; i < sizeof takeovers / sizeof takeovers[0]; i++)
    if (takeovers[i].from == a->geo.level && takeovers[i].to == l->md_level)
      t = &takeovers[i];
  if (!t)
    return array_refuse (err, errlen,
                         "array %s: RAID%d to RAID%d is not supported "
                         "(grow --level takes a 2-member RAID1 to RAID5 "
                         "and back, a RAID5 to RAID6 and back, a RAID0 to "
                         "RAID4, RAID5 or RAID10 and back, a RAID4 to RAID5 "
                         "and back)",
                         a->name, a->geo.level, l->md_level);
  if (a->ppl.on)
    return array_refuse (err, errlen,
                         "array %s keeps a partial parity log, which md "
                         "keeps for RAID5 alone; changing the consistency "
                         "policy is not supported",
                         a->name);
  pthread_mutex_lock (&a->sb_lock);
  r = check_array (a, t, err, errlen);
  pthread_mutex_unlock (&a->sb_lock);
  if (r == -1 || t->shape (a, &g, err, errlen) == -1
      || geometry_init (&g, err, errlen) == -1)
    return -1;
  if (g.array_bytes != a->geo.array_bytes)
    return array_refuse (err, errlen,
                         "array %s: RAID%d would be %" PRIu64 " bytes, not "
                         "%" PRIu64 "",
                         a->name, g.level, g.array_bytes, a->geo.array_bytes);
  array_hold_requests (a);
  array_quiesce (a);
  pthread_mutex_lock (&a->sb_lock);
  r = check_array (a, t, err, errlen); /* a member may have failed meanwhile */
  if (r == 0)
    r = apply (a, t, &g, changed, changedlen, err, errlen);
  pthread_mutex_unlock (&a->sb_lock);
  array_unquiesce (a);
  array_release_requests (a);
  if (r == -1)
    return -1;
  array_log (a, RAID_LOG_INFO,
             "array %s: RAID%d now, RAID%d before (md's %s); no data moved",
             a->name, a->geo.level, old, t->md);
  snprintf (done, donelen, "array %s is RAID%d now, RAID%d before", a->name,
            a->geo.level, old);
  return 0;
}
