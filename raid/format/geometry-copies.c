/* nbdraid: placement for the copies family: RAID0, RAID1 and RAID10.
 *
 * RAID10 follows md's __raid10_find_phys() (drivers/md/raid10.c) with
 * the original far-set layout (layout bit 17 clear), at unit
 * granularity: the offset inside a chunk never changes.
 */
#include <config.h>

#include "geometry.h"

/* md's __raid10_find_phys(): every place of RAID10 unit `unit`, each
 * near copy followed by its far copies.  Returns g->copies. */
static unsigned
raid10_places (const struct raid_geometry *g, uint64_t unit,
               struct place *places)
{
  uint64_t chunk = unit * g->near;
  uint64_t row = chunk / g->members;
  unsigned dev = chunk % g->members, n, f, slot = 0;

  if (g->far_offset)
    row *= g->far;
  for (n = 0; n < g->near; n++) {
    unsigned d = dev;
    uint64_t s = row;

    places[slot++] = (struct place) { d, s };
    for (f = 1; f < g->far; f++) {
      d = (d + g->near) % g->members;
      s += g->far_stride_units;
      places[slot++] = (struct place) { d, s };
    }
    if (++dev == g->members) {
      dev = 0;
      row++;
    }
  }
  return slot;
}

unsigned
geometry_unit_places (const struct raid_geometry *g, uint64_t unit,
                      struct place *places)
{
  unsigned i;

  switch (g->level) {
  case 0:
    places[0] = (struct place) { unit % g->members, unit / g->members };
    return 1;
  case 1:
    for (i = 0; i < g->members; i++)
      places[i] = (struct place) { i, unit };
    return g->members;
  default:
    return raid10_places (g, unit, places);
  }
}

/* md's raid10_find_virt() with the original far-set layout. */
static uint64_t
raid10_unit_at (const struct raid_geometry *g, unsigned disk, uint64_t mu)
{
  uint64_t chunk;

  if (g->far_offset) {
    unsigned fc = mu % g->far;
    chunk = mu / g->far;
    disk = (disk + g->members - (fc * g->near) % g->members) % g->members;
  }
  else {
    while (mu >= g->far_stride_units) {
      mu -= g->far_stride_units;
      disk = (disk + g->members - g->near % g->members) % g->members;
    }
    chunk = mu;
  }
  return (chunk * g->members + disk) / g->near;
}

bool
geometry_unit_at (const struct raid_geometry *g, unsigned disk,
                  uint64_t member_unit, uint64_t *unit)
{
  struct place places[RAID_MAX_MEMBERS];
  uint64_t units = (g->array_bytes + g->unit_bytes - 1) / g->unit_bytes;
  unsigned i, n;

  switch (g->level) {
  case 0:
    *unit = member_unit * g->members + disk;
    break;
  case 1:
    *unit = member_unit;
    break;
  default:
    *unit = raid10_unit_at (g, disk, member_unit);
  }
  if (*unit >= units)
    return false;
  /* The place must really hold the unit: near copies that wrap, and
   * member space past the array, map to nothing. */
  n = geometry_unit_places (g, *unit, places);
  for (i = 0; i < n; i++)
    if (places[i].disk == disk && places[i].member_unit == member_unit)
      return true;
  return false;
}
