/* nbdraid: the level table, the one place that knows what each md
 * level is: its names, whether it has a chunk and layouts, how many
 * members it needs and how many it can lose (raid.h).
 *
 * Layout words and names are md's and mdadm's: drivers/md/raid5.h
 * ALGORITHM_*, drivers/md/raid10.c (near | far << 8 | offset << 16),
 * mdadm's maps.c r5layout and Grow.c for the short spellings.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "geometry.h"
#include "raid.h"

static const struct {
  const char *name;
  uint32_t layout;
} parity_layouts[] = {
  { "left-asymmetric", LAYOUT_LEFT_ASYMMETRIC },
  { "right-asymmetric", LAYOUT_RIGHT_ASYMMETRIC },
  { "left-symmetric", LAYOUT_LEFT_SYMMETRIC },
  { "right-symmetric", LAYOUT_RIGHT_SYMMETRIC },
  { "parity-first", LAYOUT_PARITY_0 },
  { "parity-last", LAYOUT_PARITY_N },
  /* mdadm's short spellings */
  { "la", LAYOUT_LEFT_ASYMMETRIC },
  { "ra", LAYOUT_RIGHT_ASYMMETRIC },
  { "ls", LAYOUT_LEFT_SYMMETRIC },
  { "rs", LAYOUT_RIGHT_SYMMETRIC },
};
#define N_PARITY_LAYOUTS 6 /* the long names come first */
#define PARITY_LAYOUT_NAMES                                                    \
  "left-asymmetric, right-asymmetric, left-symmetric, right-symmetric, "       \
  "parity-first, parity-last"

/* RAID5/6: mdadm's long or short name of a layout (any case) to md's
 * layout word. */
static int
parity_parse_layout (const char *s, uint32_t *layout)
{
  size_t i;

  for (i = 0; i < sizeof parity_layouts / sizeof parity_layouts[0]; i++)
    if (strcasecmp (s, parity_layouts[i].name) == 0) {
      *layout = parity_layouts[i].layout;
      return 0;
    }
  return -1;
}

/* RAID5/6: md's layout word to mdadm's long name; false past the four
 * classic layouts and the two fixed ones. */
static bool
parity_name_layout (uint32_t layout, char *buf, size_t len)
{
  if (layout >= N_PARITY_LAYOUTS)
    return false;
  snprintf (buf, len, "%s", parity_layouts[layout].name);
  return true;
}

/* RAID6 also has md's "-6" layouts: each classic one and parity-first
 * with Q moved to the last disk (mdadm's maps.c r6layout; parity-last
 * has Q there already). */
static const char *const raid6_only_layouts[] = {
  "left-asymmetric-6", "right-asymmetric-6", "left-symmetric-6",
  "right-symmetric-6", "parity-first-6",
};

static int
raid6_parse_layout (const char *s, uint32_t *layout)
{
  size_t i;

  for (i = 0; i < sizeof raid6_only_layouts / sizeof *raid6_only_layouts; i++)
    if (strcasecmp (s, raid6_only_layouts[i]) == 0) {
      *layout = LAYOUT_RAID6_OFFSET + (uint32_t) i;
      return 0;
    }
  return parity_parse_layout (s, layout);
}

static bool
raid6_name_layout (uint32_t layout, char *buf, size_t len)
{
  if (layout >= LAYOUT_RAID6_OFFSET && layout <= LAYOUT_PARITY_0_6) {
    snprintf (buf, len, "%s", raid6_only_layouts[layout - LAYOUT_RAID6_OFFSET]);
    return true;
  }
  return parity_name_layout (layout, buf, len);
}

/* RAID10: near copies, the low byte of the layout word. */
static unsigned
near_copies (uint32_t layout)
{
  return layout & 0xff;
}

/* RAID10: far copies, the second byte of the layout word. */
static unsigned
far_copies (uint32_t layout)
{
  return (layout >> 8) & 0xff;
}

/* md's setup_conf() needs at least two copies; near and far together,
 * and the bits above the offset flag, are layouts we do not serve. */
static bool
raid10_serves (uint32_t layout)
{
  unsigned near = near_copies (layout), far = far_copies (layout);

  return (layout >> 17) == 0 && near >= 1 && far >= 1 &&
    (near == 1 || far == 1) && near * far >= 2;
}

/* "n2" (near), "f2" (far), "o2" (offset), 2 to 8 copies. */
static int
raid10_parse_layout (const char *s, uint32_t *layout)
{
  char kind = s[0], *end;
  long copies;

  if (kind != 'n' && kind != 'f' && kind != 'o')
    return -1;
  copies = strtol (s + 1, &end, 10);
  if (end == s + 1 || *end || copies < 2 || copies > 8)
    return -1;
  *layout = kind == 'n' ? RAID10_LAYOUT (copies, 1, false)
    : RAID10_LAYOUT (1, copies, kind == 'o');
  return 0;
}

/* RAID10: "n2", "f2" or "o2" for a layout word the engine serves. */
static bool
raid10_name_layout (uint32_t layout, char *buf, size_t len)
{
  unsigned far = far_copies (layout);

  if (!raid10_serves (layout))
    return false;
  snprintf (buf, len, "%c%u", far == 1 ? 'n' : (layout & (1 << 16)) ? 'o'
            : 'f', far == 1 ? near_copies (layout) : far);
  return true;
}

/* RAID0's layout (original or alternate, feature 0x1000) only matters
 * for md's multi-zone RAID0, which assembly refuses. */
static bool
raid0_name_layout (uint32_t layout, char *buf, size_t len)
{
  snprintf (buf, len, "-");
  return layout <= 2;
}

/* RAID4's parity is on the last disk whatever its layout word says
 * (raid5_compute_sector's case 4): mdadm writes 0, md's takeover from
 * RAID0 writes parity-last. */
static bool
raid4_name_layout (uint32_t layout, char *buf, size_t len)
{
  snprintf (buf, len, "-");
  return layout == 0 || layout == LAYOUT_PARITY_N;
}

/* RAID1 has no layout to choose: "-", and md's 0 is the only word served. */
static bool
raid1_name_layout (uint32_t layout, char *buf, size_t len)
{
  snprintf (buf, len, "-");
  return layout == 0;
}

/* RAID0, RAID1, RAID4 and RAID5 need two members, whatever the
 * layout. */
static unsigned
at_least_two (uint32_t layout)
{
  return 2;
}

/* RAID6 needs four members, whatever the layout. */
static unsigned
at_least_four (uint32_t layout)
{
  return 4;
}

/* RAID10 needs a member for each copy of a unit. */
static unsigned
raid10_min_members (uint32_t layout)
{
  return near_copies (layout) * far_copies (layout);
}

/* RAID0: no member may go. */
static unsigned
tolerates_none (uint32_t layout, unsigned members)
{
  return 0;
}

/* RAID4/5: any one member may go; parity restores it. */
static unsigned
tolerates_one (uint32_t layout, unsigned members)
{
  return 1;
}

/* RAID1: all but one member may go: each holds every byte. */
static unsigned
tolerates_all_but_one (uint32_t layout, unsigned members)
{
  return members - 1;
}

/* RAID6: any two members may go; P and Q restore them. */
static unsigned
tolerates_two (uint32_t layout, unsigned members)
{
  return 2;
}

/* Any copies - 1 members may go: each unit's copies sit on distinct
 * members.  More may go when they hold different units. */
static unsigned
raid10_tolerates (uint32_t layout, unsigned members)
{
  return raid10_min_members (layout) - 1;
}

static const struct raid_level levels[] = {
  {
      .md_level = 0,
      .name = "raid0",
      .has_chunk = true,
      .zoned = true,
      .name_layout = raid0_name_layout,
      .min_members = at_least_two,
      .tolerates = tolerates_none,
  },
  {
      .md_level = 1,
      .name = "raid1",
      .name_layout = raid1_name_layout,
      .min_members = at_least_two,
      .tolerates = tolerates_all_but_one,
  },
  {
      .md_level = 4,
      .name = "raid4",
      .has_chunk = true,
      .parity_members = 1,
      .name_layout = raid4_name_layout,
      .min_members = at_least_two,
      .tolerates = tolerates_one,
  },
  {
      .md_level = 5,
      .name = "raid5",
      .has_chunk = true,
      .parity_members = 1,
      .layouts = PARITY_LAYOUT_NAMES,
      .default_layout = LAYOUT_LEFT_SYMMETRIC,
      .parse_layout = parity_parse_layout,
      .name_layout = parity_name_layout,
      .min_members = at_least_two,
      .tolerates = tolerates_one,
  },
  {
      .md_level = 6,
      .name = "raid6",
      .has_chunk = true,
      .parity_members = 2,
      .layouts = PARITY_LAYOUT_NAMES ", and each with -6 (Q on the last disk)",
      .default_layout = LAYOUT_LEFT_SYMMETRIC,
      .parse_layout = raid6_parse_layout,
      .name_layout = raid6_name_layout,
      .min_members = at_least_four,
      .tolerates = tolerates_two,
  },
  {
      .md_level = 10,
      .name = "raid10",
      .has_chunk = true,
      .layouts = "n2, n3, f2, o2",
      .default_layout = RAID10_LAYOUT (2, 1, false),
      .parse_layout = raid10_parse_layout,
      .name_layout = raid10_name_layout,
      .min_members = raid10_min_members,
      .tolerates = raid10_tolerates,
  },
};

const struct raid_level *
raid_level_find (int md_level)
{
  size_t i;

  for (i = 0; i < sizeof levels / sizeof levels[0]; i++)
    if (levels[i].md_level == md_level)
      return &levels[i];
  return NULL;
}

const struct raid_level *
raid_level_parse (const char *s)
{
  size_t i;

  if (strncasecmp (s, "raid", 4) == 0)
    s += 4;
  for (i = 0; i < sizeof levels / sizeof levels[0]; i++)
    if (strcmp (s, levels[i].name + 4) == 0)
      return &levels[i];
  return NULL;
}

const char *
raid_layout_name (int md_level, uint32_t layout, char *buf, size_t len)
{
  const struct raid_level *l = raid_level_find (md_level);

  if (!l || !l->name_layout (layout, buf, len))
    snprintf (buf, len, "unknown layout 0x%x", layout);
  return buf;
}
