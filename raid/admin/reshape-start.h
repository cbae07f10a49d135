/* nbdraid: a restriping reshape of a RAID5/6 starts (reshape-start.c):
 * nbdraid grow --raid-devices N (the same contract as
 * raid_admin_grow_devices, whose count it gets checked), --chunk and
 * --layout (grow-shape.c). */
#ifndef NBDRAID_RESHAPE_START_H
#define NBDRAID_RESHAPE_START_H

#include "array.h"

/* The shape a reshape makes.  A level other than the array's: a RAID5
 * becoming a RAID6 of one more member (grow-shape.c). */
struct reshape_target {
  int level;
  unsigned members;
  uint64_t chunk_bytes;
  uint32_t layout;
};

int raid_admin_reshape (struct raid_array *a, const struct reshape_target *to,
                        char *changed, size_t changedlen, char *done,
                        size_t donelen, char *err, size_t errlen);

#endif
