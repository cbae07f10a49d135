/* nbdraid: nbdraid grow --raid-devices N on a RAID5 (reshape-start.c);
 * the same contract as raid_admin_grow_devices, whose count it gets
 * checked. */
#ifndef NBDRAID_RESHAPE_START_H
#define NBDRAID_RESHAPE_START_H

#include "array.h"

int raid_admin_reshape (struct raid_array *a, unsigned n, char *changed,
                        size_t changedlen, char *done, size_t donelen,
                        char *err, size_t errlen);

#endif
