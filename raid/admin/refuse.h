/* nbdraid: the refusals grow --size, grow --raid-devices and grow
 * --level share (refuse.c).  Each returns 0, or -1 with the message in
 * err, as array_refuse does. */
#ifndef NBDRAID_REFUSE_H
#define NBDRAID_REFUSE_H

#include <stddef.h>

#include "array.h"

/* The array is read-only or has failed: nothing may change it. */
int admin_refuse_unwritable (struct raid_array *a, char *err, size_t errlen);
/* The array is built of nested arrays, or keeps a write journal;
 * CHANGE names what is not supported for it ("changing its level"). */
int admin_refuse_nested (const struct raid_array *a, const char *change,
                         char *err, size_t errlen);
/* Of those, the journal alone (grow --size of an array of nested
 * ones, which grow first, group by group). */
int admin_refuse_journal (const struct raid_array *a, const char *change,
                          char *err, size_t errlen);
/* A job runs, or a resync is left to finish; LATER says what to do
 * once it is done ("grow it"). */
int admin_refuse_busy (struct raid_array *a, const char *later, char *err,
                       size_t errlen);
/* The array failed while the change went into its superblocks. */
int admin_refuse_write_failed (const struct raid_array *a, char *err,
                               size_t errlen);

#endif
