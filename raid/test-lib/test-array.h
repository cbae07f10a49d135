/* nbdraid: the engine's unit tests: an array of member files. */
#ifndef NBDRAID_TEST_ARRAY_H
#define NBDRAID_TEST_ARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "raid.h"

/* Write dir/name.conf with array_keys ("level = 5\nchunk = 16K\n") and
 * members files dir/name-N.img of bytes each (sparse), create the
 * array (with co, or the defaults if NULL) and assemble it (not
 * started).  NULL, with why in err, on failure; cfg is to be freed
 * with raid_config_free after raid_close. */
struct raid_array *test_array (const char *dir, const char *name,
                               const char *array_keys, unsigned members,
                               uint64_t bytes,
                               const struct raid_create_options *co,
                               struct raid_config *cfg, char *err,
                               size_t errlen);
/* The same, with last_flags ("write-mostly") on the last member's line
 * (NULL: none). */
struct raid_array *test_array_flagged (const char *dir, const char *name,
                                       const char *array_keys,
                                       unsigned members, uint64_t bytes,
                                       const char *last_flags,
                                       const struct raid_create_options *co,
                                       struct raid_config *cfg, char *err,
                                       size_t errlen);

#endif
