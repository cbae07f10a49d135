/* nbdraid: the spares a config with nested arrays shares among them
 * (shared-spares.c). */
#ifndef NBDRAID_SHARED_SPARES_H
#define NBDRAID_SHARED_SPARES_H

#include "array.h"

/* Find the free pool devices of the top array of nested ones: 0, or -1
 * with errno. */
int shared_spares_load (struct raid_array *root,
                        const struct raid_config *cfg);
/* Hand free pool devices to nested arrays that lost a member. */
void shared_spares_give (struct raid_array *root);

#endif
