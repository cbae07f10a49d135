/* nbdraid: nbdraid grow --chunk SIZE and --layout NAME on a RAID5/6,
 * mdadm's --grow --chunk and --layout without a backup file, and
 * --level 6 --layout NAME on a RAID5 (mdadm --grow --level=6 without
 * --layout=preserve): the value is checked here, the reshape that
 * restripes the data into the new shape starts as for more members
 * (reshape-start.c).
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "array.h"
#include "config-file.h"
#include "reshape-start.h"

/* The target with option's value in it: 0, or -1 with the reason. */
static int
parse_target (struct raid_array *a, const char *option, const char *value,
              struct reshape_target *to, char *err, size_t errlen)
{
  const struct raid_level *l = a->geo.lvl;
  char name[32];

  *to = (struct reshape_target){ .level = a->geo.level,
                                 .members = a->geo.members,
                                 .chunk_bytes = a->geo.chunk_bytes,
                                 .layout = a->geo.layout };
  if (strcmp (option, "--chunk") == 0) {
    if (raid_parse_size (value, &to->chunk_bytes) == -1
        || to->chunk_bytes < RAID_MIN_CHUNK_BYTES
        || to->chunk_bytes > RAID_MAX_CHUNK_BYTES
        || (to->chunk_bytes & (to->chunk_bytes - 1)))
      return array_refuse (err, errlen,
                           "'%s' is not a chunk for array %s (a power of "
                           "two from 4K to 1G)",
                           value, a->name);
    if (to->chunk_bytes == a->geo.chunk_bytes)
      return array_refuse (err, errlen,
                           "array %s already has a %" PRIu64 "K chunk", a->name,
                           to->chunk_bytes / 1024);
    return 0;
  }
  if (l->parse_layout (value, &to->layout) == -1)
    return array_refuse (err, errlen, "'%s' is not a RAID%d layout (%s)", value,
                         a->geo.level, l->layouts);
  if (to->layout == a->geo.layout)
    return array_refuse (
        err, errlen, "array %s already has layout %s", a->name,
        raid_layout_name (a->geo.level, to->layout, name, sizeof name));
  return 0;
}

int
raid_admin_grow_shape (struct raid_array *a, const char *option,
                       const char *value, char *done, size_t donelen, char *err,
                       size_t errlen)
{
  struct reshape_target to;
  char changed[16];

  /* md changes the chunk of RAID0 and RAID10 too, through takeovers
   * to RAID4/RAID0 we do not make. */
  if (a->geo.level != 5 && a->geo.level != 6)
    return array_refuse (err, errlen,
                         "array %s is RAID%d: grow %s applies to a RAID5 "
                         "or RAID6 only",
                         a->name, a->geo.level, option);
  if (parse_target (a, option, value, &to, err, errlen) == -1)
    return -1;
  return raid_admin_reshape (a, &to, changed, sizeof changed, done, donelen,
                             err, errlen);
}

int
raid_admin_grow_raid6 (struct raid_array *a, const char *layout, char *changed,
                       size_t changedlen, char *done, size_t donelen, char *err,
                       size_t errlen)
{
  const struct raid_level *l6 = raid_level_find (6);
  struct reshape_target to = { .level = 6,
                               .members = a->geo.members + 1,
                               .chunk_bytes = a->geo.chunk_bytes };
  char name[32];

  if (a->geo.level != 5)
    return array_refuse (err, errlen,
                         "array %s is RAID%d: grow --level 6 --layout "
                         "applies to a RAID5 only",
                         a->name, a->geo.level);
  if (a->geo.members < 3)
    return array_refuse (err, errlen,
                         "array %s has %u members: md takes a RAID5 of 3 or "
                         "more to RAID6",
                         a->name, a->geo.members);
  if (l6->parse_layout (layout, &to.layout) == -1)
    return array_refuse (err, errlen, "'%s' is not a RAID6 layout (%s)", layout,
                         l6->layouts);
  /* The layout the takeover gives: nothing to restripe. */
  if (to.layout
      == (a->geo.layout == LAYOUT_PARITY_N
              ? LAYOUT_PARITY_N
              : a->geo.layout + LAYOUT_RAID6_OFFSET))
    return array_refuse (err, errlen,
                         "array %s becomes a RAID6 of layout %s without "
                         "moving data: grow --level 6 alone does that",
                         a->name,
                         raid_layout_name (6, to.layout, name, sizeof name));
  return raid_admin_reshape (a, &to, changed, changedlen, done, donelen, err,
                             errlen);
}
