/* nbdraid: placement for the parity family: RAID4, RAID5 and RAID6.
 *
 * md's raid5_compute_sector() (drivers/md/raid5.c) for the four classic
 * layouts, parity-first and parity-last (RAID4's), and RAID6's "-6"
 * ones (ALGORITHM_*_6: the RAID5 layout on the first n-1 disks, Q on
 * the last), and the Q coefficient order of
 * raid6_d0()/raid6_idx_to_slot(): data disks counted in device order
 * starting just after Q (disk 0 when Q is the last).
 */
#include <config.h>

#include "geometry.h"

/* Q coefficients and the parity code's block order, once p_disk,
 * q_disk and data_disk[] are set: count data disks from the one after
 * Q, wrapping. */
static void
q_order (unsigned n, unsigned d, struct stripe_map *map)
{
  unsigned index_of_disk[RAID_MAX_MEMBERS], i, k, disk;

  for (i = 0; i < d; i++)
    index_of_disk[map->data_disk[i]] = i;
  for (k = 0, disk = (map->q_disk + 1) % n; k < d; disk = (disk + 1) % n)
    if (disk != map->p_disk && disk != map->q_disk) {
      map->q_coef[index_of_disk[disk]] = k;
      map->block_disk[k++] = disk;
    }
  map->block_disk[d] = map->p_disk;
  map->block_disk[d + 1] = map->q_disk;
}

/* Parity that does not rotate: P (and Q) on the first disks or the
 * last ones, the data disks in order on the rest (md's PARITY_0 and
 * PARITY_N; a RAID4 is PARITY_N whatever its layout word says). */
static void
fixed_parity (unsigned n, unsigned d, bool first, struct stripe_map *map)
{
  unsigned p = first ? 0 : d, i;

  map->p_disk = p;
  map->q_disk = n - d == 2 ? p + 1 : GEOMETRY_NO_DISK;
  for (i = 0; i < d; i++)
    map->data_disk[i] = first ? n - d + i : i;
  if (n - d == 2) {
    q_order (n, d, map);
    return;
  }
  for (i = 0; i < d; i++) {
    map->q_coef[i] = i;
    map->block_disk[i] = map->data_disk[i];
  }
  map->block_disk[d] = p;
}

void
geometry_stripe_map (const struct raid_geometry *g, uint64_t stripe,
                     struct stripe_map *map)
{
  unsigned n = g->members, d = g->data_members, i;
  unsigned rot = stripe % n;
  bool symmetric = g->layout == LAYOUT_LEFT_SYMMETRIC ||
    g->layout == LAYOUT_RIGHT_SYMMETRIC;
  bool left = g->layout == LAYOUT_LEFT_ASYMMETRIC ||
    g->layout == LAYOUT_LEFT_SYMMETRIC;

  if (g->level == 4 || g->layout == LAYOUT_PARITY_N
      || g->layout == LAYOUT_PARITY_0) {
    fixed_parity (n, d, g->level != 4 && g->layout == LAYOUT_PARITY_0, map);
    return;
  }
  if (g->parity_members == 2 && g->layout >= LAYOUT_RAID6_OFFSET) {
    struct raid_geometry r5 = *g;

    r5.layout = g->layout - LAYOUT_RAID6_OFFSET;
    r5.members = n - 1;
    r5.parity_members = 1;
    geometry_stripe_map (&r5, stripe, map);
    map->q_disk = n - 1;
    q_order (n, d, map);
    return;
  }
  map->p_disk = left ? n - 1 - rot : rot;
  if (g->parity_members == 1) {
    map->q_disk = GEOMETRY_NO_DISK;
    for (i = 0; i < d; i++)
      map->data_disk[i] = symmetric ? (map->p_disk + 1 + i) % n
        : i + (i >= map->p_disk);
    for (i = 0; i < d; i++) {
      map->q_coef[i] = i;
      map->block_disk[i] = map->data_disk[i];
    }
    map->block_disk[d] = map->p_disk;
    return;
  }

  map->q_disk = (map->p_disk + 1) % n;
  for (i = 0; i < d; i++) {
    if (symmetric)
      map->data_disk[i] = (map->p_disk + 2 + i) % n;
    else if (map->p_disk == n - 1)
      map->data_disk[i] = i + 1;        /* Q D D D P */
    else
      map->data_disk[i] = i + (i >= map->p_disk ? 2 : 0); /* D D P Q D */
  }

  q_order (n, d, map);
}
