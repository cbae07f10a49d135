/* nbdraid: RAID0 <-> RAID10, md's raid10_takeover_raid0 and
 * raid0_takeover_raid10.  A RAID0 of n members is the near-2 RAID10 of
 * 2n whose even roles are the RAID0's (role i becomes 2i): array chunk
 * c lies on RAID0 member c % n at row c / n, and on RAID10 roles
 * 2(c % n) and 2(c % n) + 1 at the same row.  md leaves the odd roles
 * missing for its recovery to fill; here spares take them at once,
 * recovering, as for a RAID5's Q disk.  Back, one device of each pair
 * keeps the data, role i; the other, if any, becomes a spare (mdadm
 * fails it first, md wants it gone).
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "takeover.h"

/* Every superblock says device dev holds role r (or is a spare). */
static void
set_role (struct raid_array *a, uint32_t dev, uint16_t r)
{
  unsigned i;

  for (i = 0; i < a->geo.members + a->nspares; i++) {
    struct md_superblock *sb = &array_slot (a, i)->sb;
    if (dev < sb->max_dev)
      sb->dev_roles[dev] = r;
  }
}

/* Append "line\n" to changed. */
static void
changed_line (char *changed, size_t changedlen, const char *line)
{
  size_t used = strlen (changed);

  snprintf (changed + used, used < changedlen ? changedlen - used : 0, "%s\n",
            line);
}

int
raid0_to_raid10 (const struct raid_array *a, struct raid_geometry *g, char *err,
                 size_t errlen)
{
  unsigned fit = array_usable_spares (a);

  if (fit < a->geo.members)
    return array_refuse (err, errlen,
                         "array %s needs %u spares for the mirrors, array "
                         "has %u (add them with nbdraid add first)",
                         a->name, a->geo.members, fit);
  if (2 * a->geo.members > RAID_MAX_MEMBERS)
    return array_refuse (err, errlen,
                         "array %s has %u members: a RAID10 of twice as "
                         "many is more than %u",
                         a->name, a->geo.members, RAID_MAX_MEMBERS);
  g->level = 10;
  g->layout = RAID10_LAYOUT (2, 1, false);
  g->members *= 2;
  return 0;
}

int
raid10_to_raid0 (const struct raid_array *a, struct raid_geometry *g, char *err,
                 size_t errlen)
{
  char name[16];

  if (a->geo.layout != RAID10_LAYOUT (2, 1, false) || a->geo.members % 2)
    return array_refuse (
        err, errlen,
        "array %s is a RAID10 %s of %u members: md takes "
        "only a near-2 (n2) RAID10 of an even count to RAID0",
        a->name, raid_layout_name (10, a->geo.layout, name, sizeof name),
        a->geo.members);
  if (a->bitmap.present)
    return array_refuse (err, errlen,
                         "array %s keeps a write-intent bitmap, which md's "
                         "RAID0 cannot, and changing its consistency policy "
                         "is not supported",
                         a->name);
  if (a->nspares + a->geo.members / 2 > RAID_MAX_MEMBERS)
    return array_refuse (err, errlen,
                         "array %s has too many spares to take half its "
                         "members as more",
                         a->name);
  g->level = 0;
  g->layout = 0;
  g->members /= 2;
  return 0;
}

/* A role no device holds, its pair's other role active: that one
 * keeps the data. */
bool
raid10_half_may_miss (const struct raid_array *a, unsigned m)
{
  return !a->slots[m].io && slot_state (&a->slots[m]) == SLOT_MISSING
         && slot_state (&a->slots[m ^ 1]) == SLOT_ACTIVE;
}

void
mirror_roles (struct raid_array *a, const struct raid_geometry *old,
              char *changed, size_t changedlen)
{
  unsigned i;

  /* From the top, so that no role is overwritten before it moves. */
  for (i = old->members; i-- > 1;)
    a->slots[2 * i] = a->slots[i];
  for (i = 0; i < old->members; i++) {
    set_role (a, a->slots[2 * i].sb.dev_number, (uint16_t)(2 * i));
    array_spare_takes_role (a, 2 * i + 1, changed, changedlen);
  }
}

void
unmirror_roles (struct raid_array *a, const struct raid_geometry *old,
                char *changed, size_t changedlen)
{
  unsigned i;

  for (i = 0; i < a->geo.members; i++) {
    /* Pair i sits at 2i and 2i+1, at or above i: not yet overwritten. */
    struct raid_slot even = a->slots[2 * i], odd = a->slots[2 * i + 1];
    bool keep_even = slot_state (&even) == SLOT_ACTIVE;
    struct raid_slot *keep = keep_even ? &even : &odd;
    struct raid_slot *drop = keep_even ? &odd : &even;

    if (drop->io) {
      changed_line (changed, changedlen, drop->path);
      a->spares[a->nspares++] = *drop;
    }
    else {
      changed_line (changed, changedlen, RAID_MEMBER_MISSING);
      free (drop->path); /* a removed device's, kept for the picture */
      free (drop->controller);
    }
    a->slots[i] = *keep;
  }
  for (i = a->geo.members; i < old->members; i++)
    memset (&a->slots[i], 0, sizeof a->slots[i]);
  for (i = 0; i < a->geo.members; i++)
    set_role (a, a->slots[i].sb.dev_number, (uint16_t)i);
  for (i = 0; i < a->nspares; i++)
    set_role (a, a->spares[i].sb.dev_number, MD_ROLE_SPARE);
}
