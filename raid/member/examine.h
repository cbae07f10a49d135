/* nbdraid: examining a member that is already open: raid_examine's
 * work, which raid_examine_array does on an array's own data too. */
#ifndef NBDRAID_EXAMINE_H
#define NBDRAID_EXAMINE_H

#include <stddef.h>

#include "member.h"
#include "raid.h"

/* As raid_examine, on m (which stays open). */
int member_examine (struct member *m, struct raid_member_info *info,
                    char *err, size_t errlen);

#endif
