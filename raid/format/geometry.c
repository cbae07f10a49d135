/* nbdraid: geometry set-up and validation, and which members survive. */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "geometry.h"
#include "raid.h"

/* md raid10.c: raid10_size() and calc_sectors(). */
static void
init_raid10 (struct raid_geometry *g)
{
  uint64_t member_units = g->member_bytes / g->unit_bytes;
  uint64_t array_units, used_units;

  g->near = g->layout & 0xff;
  g->far = (g->layout >> 8) & 0xff;
  g->far_offset = (g->layout >> 16) & 1;
  g->copies = g->near * g->far;
  array_units = member_units / g->far * g->members / g->near;
  used_units = (array_units * g->copies + g->members - 1) / g->members;
  g->far_stride_units = g->far_offset ? 1 : used_units / g->far;
  g->array_bytes = array_units * g->unit_bytes;
}

int
geometry_init (struct raid_geometry *g, char *err, size_t errlen)
{
  const struct raid_level *l = raid_level_find (g->level);
  unsigned min;
  char name[32];

  if (!l) {
    snprintf (err, errlen,
              "RAID level %d is not supported (0, 1, 4, 5, 6 and "
              "10 are)",
              g->level);
    return -1;
  }
  if (!l->name_layout (g->layout, name, sizeof name)) {
    if (l->layouts)
      snprintf (err, errlen, "RAID%d layout %u is not supported (%s are)",
                g->level, g->layout, l->layouts);
    else
      snprintf (err, errlen, "RAID%d layout %u is not supported",
                g->level, g->layout);
    return -1;
  }
  min = l->min_members (g->layout);
  if (g->members < min || g->members > RAID_MAX_MEMBERS) {
    snprintf (err, errlen, "RAID%d %s needs %u to %u members, not %u",
              g->level, name, min, RAID_MAX_MEMBERS, g->members);
    return -1;
  }
  if (!l->has_chunk)
    g->unit_bytes = RAID1_UNIT_BYTES;
  else {
    if (g->chunk_bytes < RAID_MIN_CHUNK_BYTES ||
        g->chunk_bytes > RAID_MAX_CHUNK_BYTES ||
        (g->chunk_bytes & (g->chunk_bytes - 1))) {
      snprintf (err, errlen, "chunk %" PRIu64 " must be a power of two "
                "from 4K to 1G", g->chunk_bytes);
      return -1;
    }
    g->unit_bytes = g->chunk_bytes;
    if (g->member_bytes % g->chunk_bytes) {
      snprintf (err, errlen, "member size %" PRIu64 " is not a multiple of "
                "the chunk %" PRIu64, g->member_bytes, g->chunk_bytes);
      return -1;
    }
  }
  if (g->member_bytes == 0 || g->member_bytes % 512) {
    snprintf (err, errlen, "member size %" PRIu64 " is not a positive "
              "multiple of 512", g->member_bytes);
    return -1;
  }

  g->lvl = l;
  g->tolerates = l->tolerates (g->layout, g->members);
  g->parity_members = l->parity_members;
  g->data_members = g->members - g->parity_members;
  g->copies = 1;
  g->array_bytes = g->member_bytes * g->data_members;
  /* The copies family: md's raid1.c and raid10.c. */
  switch (g->level) {
  case 1:
    g->copies = g->members;
    g->data_members = 1;
    g->array_bytes = g->member_bytes;
    break;
  case 10:
    g->data_members = 1;
    init_raid10 (g);
    break;
  }
  return 0;
}

/* Is member m in set (bit m of set[m / 64])? */
static bool
bit (const uint64_t *set, unsigned m)
{
  return set[m / 64] >> (m % 64) & 1;
}

bool
geometry_survives (const struct raid_geometry *g, const uint64_t *gone)
{
  struct place places[RAID_MAX_MEMBERS];
  unsigned u, i, n, lost = 0;

  if (g->parity_members) {
    for (i = 0; i < g->members; i++)
      lost += bit (gone, i);
    return lost <= g->parity_members;
  }
  /* Copies: which members hold a unit depends only on where its first
   * copy starts, and units 0..members-1 start on every member. */
  for (u = 0; u < g->members; u++) {
    n = geometry_unit_places (g, u, places);
    for (i = 0; i < n; i++)
      if (!bit (gone, places[i].disk))
        break;
    if (i == n)
      return false;
  }
  return true;
}

/* Which members a unit's copies sit on depends only on the member its
 * first copy starts on (unit * near % members): RAID1 puts every unit
 * on every member; RAID10's near copies take the members after it, its
 * far and offset copies each the member near further on (md's
 * far_set_size = raid_disks), whatever the row, only the member unit
 * differs.  So the pattern repeats every members units (or fewer), and
 * units 0..members-1 show every set of members that share a unit. */
void
geometry_role_partners (const struct raid_geometry *g, unsigned m,
                        uint64_t *partners)
{
  struct place places[RAID_MAX_MEMBERS];
  unsigned u, i, n;

  memset (partners, 0, (g->members + 63) / 64 * sizeof *partners);
  if (g->parity_members)
    return;
  for (u = 0; u < g->members; u++) {
    n = geometry_unit_places (g, u, places);
    for (i = 0; i < n && places[i].disk != m; i++)
      ;
    if (i == n)
      continue;
    for (i = 0; i < n; i++)
      if (places[i].disk != m)
        partners[places[i].disk / 64] |= 1ULL << (places[i].disk % 64);
  }
}

bool
geometry_role_only_parity (const struct raid_geometry *g, unsigned m)
{
  struct stripe_map map;
  unsigned s;

  if (!g->parity_members)
    return false;
  /* Every layout repeats after members stripes (or fewer). */
  for (s = 0; s < g->members; s++) {
    geometry_stripe_map (g, s, &map);
    if (map.p_disk != m && map.q_disk != m)
      return false;
  }
  return true;
}

uint64_t
geometry_sync_bytes (const struct raid_geometry *g)
{
  if (g->parity_members)
    return g->member_bytes;
  return (g->array_bytes + g->unit_bytes - 1) / g->unit_bytes * g->unit_bytes;
}
