/* nbdraid: the request paths of each md level (levels.c). */
#ifndef NBDRAID_LEVELS_H
#define NBDRAID_LEVELS_H

#include "array.h"

/* The family serving md level md_level: NULL if none does. */
const struct raid_level_ops *levels_ops (int md_level);

/* The families (io-copies.c, io-parity.c). */
extern const struct raid_level_ops copies_level_ops;
extern const struct raid_level_ops parity_level_ops;

#endif
