/* nbdkit-raid-plugin: spares lent across arrays (spare-groups.c). */
#ifndef NBDRAID_SPARE_GROUPS_H
#define NBDRAID_SPARE_GROUPS_H

#include "control.h"

/* control_server.tick: move a spare between the arrays of one
 * spare-group, one step on the thread of the array c controls. */
void spare_groups_tick (struct control *c, struct raid_array *a,
                        struct raid_config *cfg);

#endif
