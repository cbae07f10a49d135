/* nbdraid: md's data layouts, transcribed slowly from drivers/md for
 * the tests to compare the engine's geometry with (test-geometry).
 *
 * The models work in 512-byte sectors, as md does, and follow
 * raid0.c map_sector() (one zone), raid5.c raid5_compute_sector(),
 * set_syndrome_sources() and only_parity(), raid10.c
 * __raid10_find_phys() (far_set_size = raid_disks), calc_sectors() and
 * raid10_size().
 */
#ifndef NBDRAID_MD_LAYOUT_H
#define NBDRAID_MD_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

/* One copy of an array sector: member and member sector. */
struct model_place {
  unsigned dev;
  uint64_t sector;
};

/* md raid10.c struct geom plus the stride calc_sectors() sets. */
struct model_r10 {
  unsigned raid_disks, near_copies, far_copies, far_set_size;
  bool far_offset;
  uint64_t chunk_sects, stride, dev_sectors, array_sectors;
};

/* md raid5.c raid5_compute_sector() for levels 4, 5 and 6, algorithms
 * 0-5, and 16-20 for RAID6.  qd is -1 for RAID4/5. */
struct model_r5 {
  int dd, pd, qd;
  uint64_t sector;
};

/* md raid0.c map_sector() for a single zone (equal-sized members). */
void model_raid0 (unsigned raid_disks, uint64_t chunk_sects,
                  uint64_t sector, struct model_place *p);

/* md raid10.c setup_geo() (layout >> 17 == 0), calc_sectors() and
 * raid10_size(). */
void model_raid10_setup (struct model_r10 *m, uint32_t layout,
                         unsigned disks, uint64_t chunk_sects,
                         uint64_t member_sectors);

/* md raid10.c __raid10_find_phys(), returning the slot count. */
unsigned model_raid10_find_phys (const struct model_r10 *m,
                                 uint64_t r_sector,
                                 struct model_place *devs);

/* md raid5.c raid5_compute_sector() (struct model_r5 above). */
void model_raid5_compute_sector (int level, uint32_t algorithm,
                                 int raid_disks, uint64_t sectors_per_chunk,
                                 uint64_t r_sector, struct model_r5 *r);

/* md raid5.c set_syndrome_sources(): the Q slot of data disk `disk`,
 * counting from raid6_d0() (the disk after Q) and skipping P and Q. */
unsigned model_syndrome_slot (unsigned disks, int pd, int qd, int disk);

/* md's only_parity() (raid5.c), per layout, for n members: which
 * roles hold nothing but P or Q, as a bitmask. */
uint64_t model_only_parity (int level, uint32_t layout, unsigned n);

#endif
