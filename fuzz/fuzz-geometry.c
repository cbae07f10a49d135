/* nbdraid fuzz target: the placement functions of every level.
 *
 * Input bytes choose a valid geometry (level 0, 1, 5, 6 or 10, every
 * layout we serve incl. RAID10 near/far/offset with 2-4 copies, member
 * count, chunk, member size), then units and member places to map.
 * Every copy of a unit must lie on a member inside its data area, on
 * distinct members, and map back to the unit; a parity stripe must use
 * every member once.  geometry_init refusing a valid geometry is a bug
 * too.
 */
#include <config.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geometry.h"
#include "raid.h"
#include "check.h"


struct input {
  const uint8_t *p;
  size_t left;
};

static uint64_t
take (struct input *in, unsigned bytes)
{
  uint64_t v = 0;

  while (bytes--) {
    v = v << 8 | (in->left ? *in->p : 0);
    if (in->left) {
      in->p++;
      in->left--;
    }
  }
  return v;
}

static void
choose (struct input *in, struct raid_geometry *g)
{
  static const int levels[] = { 0, 1, 5, 6, 10 };
  unsigned min, copies;
  uint64_t units;

  memset (g, 0, sizeof *g);
  g->level = levels[take (in, 1) % 5];
  switch (g->level) {
  case 0:
    g->layout = take (in, 1) % 3;
    break;
  case 5:
  case 6:
    g->layout = take (in, 1) % 4;
    break;
  case 10:
    copies = 2 + take (in, 1) % 3;
    switch (take (in, 1) % 3) {
    case 0:
      g->layout = RAID10_LAYOUT (copies, 1, false);
      break;
    case 1:
      g->layout = RAID10_LAYOUT (1, copies, false);
      break;
    default:
      g->layout = RAID10_LAYOUT (1, copies, true);
    }
    break;
  }
  min = raid_level_find (g->level)->min_members (g->layout);
  g->members = min + take (in, 1) % (RAID_MAX_MEMBERS - min + 1);
  g->chunk_bytes = (uint64_t) RAID_MIN_CHUNK_BYTES << take (in, 1) % 19;
  units = 1 + take (in, 2) % 4096;
  if (g->level == 1)
    g->member_bytes = 512 * (1 + take (in, 3) % (1 << 20));
  else
    g->member_bytes = g->chunk_bytes * units;
}

static void
check_copies (const struct raid_geometry *g, uint64_t unit)
{
  struct place places[RAID_MAX_MEMBERS];
  uint64_t member_units = (g->member_bytes + g->unit_bytes - 1) /
    g->unit_bytes, back;
  unsigned n = geometry_unit_places (g, unit, places), i, j;

  CHECK (n == g->copies && n >= 1);
  for (i = 0; i < n; i++) {
    CHECK (places[i].disk < g->members);
    CHECK (places[i].member_unit < member_units);
    for (j = 0; j < i; j++)
      CHECK (places[j].disk != places[i].disk);
    CHECK (geometry_unit_at (g, places[i].disk, places[i].member_unit,
                             &back));
    CHECK (back == unit);
  }
}

/* Array unit u of a parity level: its stripe's map must use every
 * member once, and u must map to a member place inside the data area
 * that maps back to u. */
static void
check_parity (const struct raid_geometry *g, uint64_t u)
{
  static struct stripe_map map;
  unsigned n = g->members, d = g->data_members, i, disk, index = n;
  uint64_t stripe = u / d, used = 0, coefs = 0;
  bool seen[RAID_MAX_MEMBERS] = { false };

  CHECK (d + g->parity_members == n);
  CHECK (stripe < g->member_bytes / g->unit_bytes);
  geometry_stripe_map (g, stripe, &map);
  disk = map.data_disk[u % d];
  for (i = 0; i < d; i++)
    if (map.data_disk[i] == disk)
      index = i;
  CHECK (stripe * d + index == u);
  CHECK (map.p_disk < n);
  CHECK (g->parity_members == 1 ? map.q_disk == GEOMETRY_NO_DISK
         : map.q_disk < n && map.q_disk != map.p_disk);
  seen[map.p_disk] = true;
  if (g->parity_members == 2)
    seen[map.q_disk] = true;
  for (i = 0; i < d; i++) {
    CHECK (map.data_disk[i] < n && !seen[map.data_disk[i]]);
    seen[map.data_disk[i]] = true;
    CHECK (map.q_coef[i] < d);
    CHECK (map.block_disk[map.q_coef[i]] == map.data_disk[i]);
    coefs += map.q_coef[i];
  }
  CHECK (coefs == (uint64_t) d * (d - 1) / 2);
  CHECK (map.block_disk[d] == map.p_disk);
  if (g->parity_members == 2)
    CHECK (map.block_disk[d + 1] == map.q_disk);
  for (i = 0; i < n; i++)
    used += seen[i];
  CHECK (used == n);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct input in = { data, size };
  struct raid_geometry g;
  uint64_t units, member_units, u, back, gone[2];
  char err[256], name[48];
  unsigned k;

  choose (&in, &g);
  if (geometry_init (&g, err, sizeof err) == -1) {
    fprintf (stderr, "refused a valid geometry: %s\n", err);
    abort ();
  }
  if (g.lvl->layouts) {
    uint32_t parsed;
    raid_layout_name (g.level, g.layout, name, sizeof name);
    CHECK (g.lvl->parse_layout (name, &parsed) == 0);
    CHECK (parsed == g.layout);
  }
  units = (g.array_bytes + g.unit_bytes - 1) / g.unit_bytes;
  member_units = (g.member_bytes + g.unit_bytes - 1) / g.unit_bytes;
  CHECK (g.array_bytes % g.unit_bytes == 0 || g.level == 1);
  CHECK (g.parity_members ? geometry_sync_bytes (&g) == g.member_bytes
         : geometry_sync_bytes (&g) >= g.array_bytes);
  for (k = 0; k < 8 && units; k++) {
    u = take (&in, 8) % units;
    if (g.parity_members) {
      check_parity (&g, u);
      continue;
    }
    check_copies (&g, u);
    /* and from a member's side: any place either holds nothing or a
     * unit that has a copy there */
    if (geometry_unit_at (&g, take (&in, 1) % g.members,
                          take (&in, 8) % member_units, &back))
      check_copies (&g, back);
  }
  gone[0] = take (&in, 8);
  gone[1] = take (&in, 8);
  (void) geometry_survives (&g, gone);
  return 0;
}
