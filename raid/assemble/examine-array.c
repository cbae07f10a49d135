/* nbdraid: examining an array as the member of another (nbdraid scan
 * finds nested arrays by the superblock at the start of their data). */
#include <config.h>

#include <errno.h>
#include <stdio.h>

#include "array.h"
#include "examine.h"

int
raid_examine_array (const struct raid_config *cfg,
                    struct raid_member_info *info, char *err, size_t errlen)
{
  /* Read-only: nothing reaches the members, not even the record of a
   * missing one. */
  const struct raid_options opts = { .readonly = true, .degraded = true };
  struct raid_array *a = raid_assemble (cfg, &opts, err, errlen);
  struct member *m;
  char spec[64];
  int r = -1, saved = EIO;

  if (!a) {
    errno = EIO;
    return -1;
  }
  snprintf (spec, sizeof spec, "array:%s", cfg->name);
  m = member_array_open (a, spec, err, errlen);
  if (m) {
    r = member_examine (m, info, err, errlen);
    saved = errno;
  }
  member_close (m);
  raid_close (a);
  errno = saved;
  return r;
}
