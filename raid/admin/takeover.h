/* nbdraid: the level changes md makes without moving data (takeover.c):
 * each one's shape and, where roles do more than gain or lose a last
 * one, how they move (takeover-mirrors.c: RAID0 <-> RAID10).
 */
#ifndef NBDRAID_TAKEOVER_H
#define NBDRAID_TAKEOVER_H

#include <stdbool.h>
#include <stddef.h>

#include "array.h"

/* A change md makes by takeover: from and to, and the new shape given
 * the old geometry (0, or -1 with why it cannot). */
struct takeover {
  int from, to;
  const char *md; /* md's function, for messages */
  int (*shape) (const struct raid_array *a, struct raid_geometry *g, char *err,
                size_t errlen);
  /* May role m be empty (no device) for the change?  NULL: no role. */
  bool (*may_miss) (const struct raid_array *a, unsigned m);
  /* The devices into their new roles, once a->geo is the new geometry
   * (old the one before); the paths whose config lines change into
   * changed, one a line.  NULL: a role gained or lost at the end. */
  void (*move_roles) (struct raid_array *a, const struct raid_geometry *old,
                      char *changed, size_t changedlen);
};

/* raid10_takeover_raid0 and raid0_takeover_raid10. */
int raid0_to_raid10 (const struct raid_array *a, struct raid_geometry *g,
                     char *err, size_t errlen);
int raid10_to_raid0 (const struct raid_array *a, struct raid_geometry *g,
                     char *err, size_t errlen);
bool raid10_half_may_miss (const struct raid_array *a, unsigned m);
void mirror_roles (struct raid_array *a, const struct raid_geometry *old,
                   char *changed, size_t changedlen);
void unmirror_roles (struct raid_array *a, const struct raid_geometry *old,
                     char *changed, size_t changedlen);

#endif
