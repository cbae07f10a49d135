/* nbdraid: how an array comes back consistent when it starts
 * (consistency.c). */
#ifndef NBDRAID_CONSISTENCY_H
#define NBDRAID_CONSISTENCY_H

#include <stddef.h>

#include "array.h"

/* After the array is claimed: replay its partial parity log if it has
 * one and stopped uncleanly, or its write journal (refusing it without
 * its journal unless read-only), and refuse a dirty degraded parity array
 * without one unless told (md's start_dirty_degraded).  0, or -1 with
 * a one-line reason in err. */
int assemble_consistency (struct raid_array *a, const struct raid_config *cfg,
                          const struct md_superblock *ref,
                          const struct raid_options *opts, char *err,
                          size_t errlen);

#endif
