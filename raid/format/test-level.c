/* nbdraid: test the level table (raid/format/level.c): the names of
 * levels and layouts as mdadm spells them, md's layout words, and how
 * many failed members each level survives, against the geometry.
 */
#include <config.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geometry.h"
#include "raid.h"
#include "test-report.h"

#define ELEMS(a) (sizeof (a) / sizeof (a)[0])

static void
check_level_name (const char *s, int want)
{
  const struct raid_level *l = raid_level_parse (s);

  if (want == -1 && l)
    fail ("raid_level_parse accepted \"%s\" as %d", s, l->md_level);
  else if (want != -1 && (!l || l->md_level != want))
    fail ("raid_level_parse (\"%s\"): level %d; want %d", s,
          l ? l->md_level : -1, want);
  else if (l && raid_level_find (want) != l)
    fail ("raid_level_find (%d) is not raid_level_parse (\"%s\")", want, s);
}

/* name -> layout -> name, and the layout is what md calls it. */
static void
check_layout_name (int level, const char *s, int64_t want,
                   const char *canonical)
{
  const struct raid_level *l = raid_level_find (level);
  uint32_t layout = 0xdeadbeef;
  int r = l->parse_layout ? l->parse_layout (s, &layout) : -1;
  char buf[64];

  if (want == -1) {
    if (r == 0)
      fail ("RAID%d parse_layout (\"%s\") accepted it as 0x%x",
            level, s, layout);
    return;
  }
  if (r != 0 || layout != want) {
    fail ("RAID%d parse_layout (\"%s\"): returned %d, layout 0x%x; "
          "want 0x%" PRIx64, level, s, r, layout, want);
    return;
  }
  raid_layout_name (level, layout, buf, sizeof buf);
  if (strcmp (buf, canonical) != 0)
    fail ("raid_layout_name (%d, 0x%x) is \"%s\", want \"%s\"",
          level, layout, buf, canonical);
}

static unsigned
check_names (void)
{
  static const struct {
    const char *s;
    int level;
  } levels[] = {
    { "0", 0 },       { "1", 1 },       { "5", 5 },     { "6", 6 },
    { "10", 10 },     { "raid0", 0 },   { "raid1", 1 }, { "RAID5", 5 },
    { "raid6", 6 },   { "raid10", 10 }, { "4", 4 },     { "raid4", 4 },
    { "3", -1 },      { "", -1 },       { "raid", -1 }, { "100", -1 },
    { "linear", -1 }, { "-1", -1 },     { "5 ", -1 },
  };
  static const struct {
    int level;
    const char *s;
    int64_t want;
    const char *canonical;
  } layouts[] = {
    { 5, "left-asymmetric", 0, "left-asymmetric" },
    { 5, "right-asymmetric", 1, "right-asymmetric" },
    { 5, "left-symmetric", 2, "left-symmetric" },
    { 5, "right-symmetric", 3, "right-symmetric" },
    { 5, "la", 0, "left-asymmetric" },
    { 5, "ra", 1, "right-asymmetric" },
    { 5, "ls", 2, "left-symmetric" },
    { 5, "rs", 3, "right-symmetric" },
    { 6, "left-asymmetric", 0, "left-asymmetric" },
    { 6, "right-asymmetric", 1, "right-asymmetric" },
    { 6, "left-symmetric", 2, "left-symmetric" },
    { 6, "right-symmetric", 3, "right-symmetric" },
    { 10, "n2", 0x102, "n2" },
    { 10, "n3", 0x103, "n3" },
    { 10, "f2", 0x201, "f2" },
    { 10, "f3", 0x301, "f3" },
    { 10, "o2", 0x10201, "o2" },
    { 10, "o3", 0x10301, "o3" },
    { 5, "parity-first", 4, "parity-first" },
    { 5, "parity-last", 5, "parity-last" },
    { 6, "parity-first", 4, "parity-first" },
    { 6, "parity-last", 5, "parity-last" },
    { 6, "parity-first-6", 20, "parity-first-6" },
    { 5, "parity-first-6", -1, NULL },
    { 6, "parity-last-6", -1, NULL },
    { 4, "parity-last", -1, NULL },
    { 5, "", -1, NULL },
    { 6, "n2", -1, NULL },
    { 10, "left-symmetric", -1, NULL },
    { 10, "n1", -1, NULL },
    { 10, "x2", -1, NULL },
    { 10, "n", -1, NULL },
    { 10, "n2x", -1, NULL },
    { 10, "f9", -1, NULL },
    { 10, "", -1, NULL },
    { 0, "n2", -1, NULL },
    { 1, "left-symmetric", -1, NULL },
  };
  char buf[64];
  size_t i;

  for (i = 0; i < ELEMS (levels); i++)
    check_level_name (levels[i].s, levels[i].level);
  for (i = 0; i < ELEMS (layouts); i++)
    check_layout_name (layouts[i].level, layouts[i].s, layouts[i].want,
                       layouts[i].canonical);
  for (i = 0; i <= 1; i++)
    if (strcmp (raid_layout_name ((int) i, 0, buf, sizeof buf), "-"))
      fail ("raid_layout_name (%zu, 0) is \"%s\", want \"-\"", i, buf);
  /* mdadm's defaults (mdadm's Create.c and maps.c) */
  if (raid_level_find (5)->default_layout != LAYOUT_LEFT_SYMMETRIC ||
      raid_level_find (6)->default_layout != LAYOUT_LEFT_SYMMETRIC ||
      raid_level_find (10)->default_layout != 0x102)
    fail ("default layouts are %u, %u, 0x%x; want 2, 2, 0x102",
          raid_level_find (5)->default_layout,
          raid_level_find (6)->default_layout,
          raid_level_find (10)->default_layout);
  return ELEMS (levels) + ELEMS (layouts);
}

/* ---- the level table's tolerance ---------------------------------- */

/* The table's "tolerates" against the geometry: losing any set of that
 * many members leaves every unit readable, and for every level some
 * set of one more loses data (the table does not undersell either).
 * Every subset of 2..9 members. */
static unsigned
check_tolerates_one (int level, uint32_t layout, unsigned n)
{
  struct raid_geometry g = {
    .level = level, .layout = layout, .members = n,
    .chunk_bytes = 65536, .member_bytes = 64 * 65536,
  };
  uint64_t gone[(RAID_MAX_MEMBERS + 63) / 64] = { 0 };
  bool one_more_fails = false;
  char err[256], desc[64], name[32];
  unsigned set;

  if (geometry_init (&g, err, sizeof err) == -1)
    return 0;
  snprintf (desc, sizeof desc, "raid%d %s n=%u", level,
            raid_layout_name (level, layout, name, sizeof name), n);
  for (set = 0; set < 1u << n; set++) {
    unsigned lost = (unsigned) __builtin_popcount (set);

    gone[0] = set;
    if (lost <= g.tolerates && !geometry_survives (&g, gone))
      fail ("%s: the table says %u may fail, but losing members 0x%x "
            "loses data", desc, g.tolerates,
            set);
    if (lost == g.tolerates + 1 && !geometry_survives (&g, gone))
      one_more_fails = true;
  }
  if (!one_more_fails && g.tolerates < n)
    fail ("%s: the table says %u may fail, but any %u may",
          desc, g.tolerates, g.tolerates + 1);
  return 1;
}

static unsigned
check_tolerates (void)
{
  static const uint32_t raid10[] = { 0x102, 0x103, 0x201, 0x10201, 0x301 };
  unsigned arrays = 0, n, l;

  for (n = 2; n <= 9; n++) {
    arrays += check_tolerates_one (0, 0, n);
    arrays += check_tolerates_one (1, 0, n);
    arrays += check_tolerates_one (5, LAYOUT_LEFT_SYMMETRIC, n);
    arrays += check_tolerates_one (6, LAYOUT_LEFT_SYMMETRIC, n);
    for (l = 0; l < ELEMS (raid10); l++)
      arrays += check_tolerates_one (10, raid10[l], n);
  }
  return arrays;
}

int
main (void)
{
  unsigned names = check_names (), arrays = check_tolerates ();

  if (failures) {
    printf ("test-level: %u failures\n", failures);
    return EXIT_FAILURE;
  }
  printf ("test-level: %u names round-trip; %u arrays lose no data to the "
          "failures the level table says they tolerate, and one more "
          "loses some\n", names, arrays);
  return EXIT_SUCCESS;
}
