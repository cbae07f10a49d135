/* nbdraid: which family of request paths serves each md level.  The
 * level table (raid/format/level.c) says what a level is; this says
 * which code runs its requests: a level added there adds a line here.
 */
#include <config.h>

#include "levels.h"

static const struct {
  int md_level;
  const struct raid_level_ops *ops;
} families[] = {
  { 0, &copies_level_ops },  /* striped: one copy */
  { 1, &copies_level_ops },  /* a copy on every member */
  { 10, &copies_level_ops }, /* near, far and offset copies */
  { 4, &parity_level_ops },  /* RAID5 with the parity on the last disk */
  { 5, &parity_level_ops },  { 6, &parity_level_ops },
};

const struct raid_level_ops *
levels_ops (int md_level)
{
  size_t i;

  for (i = 0; i < sizeof families / sizeof families[0]; i++)
    if (families[i].md_level == md_level)
      return families[i].ops;
  return NULL;
}
