/* nbdraid: which device holds which role of an assembled array
 * (place.c). */
#ifndef NBDRAID_PLACE_H
#define NBDRAID_PLACE_H

#include <stddef.h>

#include "array.h"
#include "candidates.h"

/* Give every device of c[0..n-1] its place after ref's dev_roles: a
 * role of a (refusing a device of another array), or outside the roles
 * (place_the_rest: spares, stale or faulty devices).  0, or -1 with a
 * one-line reason in err (place_the_rest: out of memory). */
int place_devices (struct raid_array *a, const struct raid_config *cfg,
                   struct candidate *c, unsigned n,
                   const struct md_superblock *ref, char *err, size_t errlen);
int place_the_rest (struct raid_array *a, const struct raid_config *cfg,
                    struct candidate *c, unsigned n,
                    const struct md_superblock *ref);

#endif
