/* nbdraid: controllers (shelves, hosts) as failure domains.
 *
 * Each member may name the controller it hangs off.  An array survives
 * a controller loss when every byte stays readable without all of that
 * controller's members; placement can often make it so (RAID10's copies
 * on different controllers), counts sometimes cannot (three RAID6
 * members on one controller).
 */
#ifndef NBDRAID_CONTROLLERS_H
#define NBDRAID_CONTROLLERS_H

#include <stddef.h>

#include "config-file.h"
#include "geometry.h"

/* With member order[role] in each role (NULL: the config's order), does
 * the array survive the loss of any one controller?  A nested array
 * member is lost with a controller when the loss fails it.  1 yes, 0 no
 * (why names the controller and the roles), -1 no member (nested ones
 * included) names one. */
int controllers_survive (const struct raid_geometry *g,
                         const struct raid_config *cfg,
                         const unsigned *order, char *why, size_t len);

/* An order of the config's members (order[role] = member index) that
 * survives the loss of any one controller: 0, or -1 if there is none. */
int controllers_arrange (const struct raid_geometry *g,
                         const struct raid_config *cfg, unsigned *order);

/* The geometry cfg's level, layout, chunk and member count give (with
 * a nominal member size): 0, or -1 with err. */
int controllers_shape (const struct raid_config *cfg,
                       struct raid_geometry *g, char *err, size_t len);

/* Each controller and how many members hang off it: "c0 (3), c1 (3)". */
void controllers_describe (const struct raid_config *cfg, char *buf,
                           size_t len);

#endif
