/* nbdraid: md's data layouts, transcribed from drivers/md (md-layout.h). */
#include <config.h>

#include <stdlib.h>

#include "geometry.h"
#include "md-layout.h"

/* md raid0.c map_sector() for a single zone (equal-sized members). */
void
model_raid0 (unsigned raid_disks, uint64_t chunk_sects, uint64_t sector,
             struct model_place *p)
{
  uint64_t sect_in_chunk = sector % chunk_sects;
  uint64_t chunk = sector / (raid_disks * chunk_sects);

  p->sector = chunk * chunk_sects + sect_in_chunk;
  p->dev = (sector / chunk_sects) % raid_disks;
}

/* md raid10.c setup_geo() (layout >> 17 == 0), calc_sectors() and
 * raid10_size(). */
void
model_raid10_setup (struct model_r10 *m, uint32_t layout, unsigned disks,
                    uint64_t chunk_sects, uint64_t member_sectors)
{
  uint64_t size;
  unsigned copies;

  m->raid_disks = disks;
  m->near_copies = layout & 255;
  m->far_copies = (layout >> 8) & 255;
  m->far_offset = layout & (1 << 16);
  m->far_set_size = disks;
  m->chunk_sects = chunk_sects;
  copies = m->near_copies * m->far_copies;

  /* calc_sectors() */
  size = member_sectors / chunk_sects;
  size /= m->far_copies;
  size *= m->raid_disks;
  size /= m->near_copies;
  size *= copies;
  size = (size + m->raid_disks - 1) / m->raid_disks;
  m->dev_sectors = size * chunk_sects;
  if (m->far_offset)
    m->stride = chunk_sects;
  else
    m->stride = size / m->far_copies * chunk_sects;

  /* raid10_size (mddev, 0, 0), which raid10_run() makes the array size */
  size = m->dev_sectors / chunk_sects;
  size /= m->far_copies;
  size *= m->raid_disks;
  size /= m->near_copies;
  m->array_sectors = size * chunk_sects;
}

/* md raid10.c __raid10_find_phys(), returning the slot count. */
unsigned
model_raid10_find_phys (const struct model_r10 *m, uint64_t r_sector,
                        struct model_place *devs)
{
  int last_far_set_start, last_far_set_size;
  uint64_t chunk, stripe, sector;
  unsigned n, f, slot = 0;
  int dev;

  last_far_set_start = (m->raid_disks / m->far_set_size) - 1;
  last_far_set_start *= m->far_set_size;
  last_far_set_size = m->far_set_size;
  last_far_set_size += (m->raid_disks % m->far_set_size);

  chunk = r_sector / m->chunk_sects;
  sector = r_sector % m->chunk_sects;
  chunk *= m->near_copies;
  stripe = chunk / m->raid_disks;
  dev = chunk % m->raid_disks;
  if (m->far_offset)
    stripe *= m->far_copies;
  sector += stripe * m->chunk_sects;

  for (n = 0; n < m->near_copies; n++) {
    int d = dev, set;
    uint64_t s = sector;

    devs[slot++] = (struct model_place) { d, s };
    for (f = 1; f < m->far_copies; f++) {
      set = d / m->far_set_size;
      d += m->near_copies;
      if ((m->raid_disks % m->far_set_size) && d > last_far_set_start) {
        d -= last_far_set_start;
        d %= last_far_set_size;
        d += last_far_set_start;
      }
      else {
        d %= m->far_set_size;
        d += m->far_set_size * set;
      }
      s += m->stride;
      devs[slot++] = (struct model_place) { d, s };
    }
    dev++;
    if (dev >= (int) m->raid_disks) {
      dev = 0;
      sector += m->chunk_sects;
    }
  }
  return slot;
}

void
model_raid5_compute_sector (int level, uint32_t algorithm, int raid_disks,
                            uint64_t sectors_per_chunk,
                            uint64_t r_sector, struct model_r5 *r)
{
  int max_degraded = level == 6 ? 2 : 1;
  int data_disks = raid_disks - max_degraded;
  uint64_t chunk_offset = r_sector % sectors_per_chunk;
  uint64_t chunk_number = r_sector / sectors_per_chunk;
  uint64_t stripe = chunk_number / data_disks;
  int rot = stripe % raid_disks;
  int dd = chunk_number % data_disks, pd = -1, qd = -1;

  if (level == 4)
    pd = data_disks; /* whatever the algorithm */
  else if (level == 5) {
    switch (algorithm) {
    case LAYOUT_LEFT_ASYMMETRIC:
      pd = data_disks - rot;
      if (dd >= pd)
        dd++;
      break;
    case LAYOUT_RIGHT_ASYMMETRIC:
      pd = rot;
      if (dd >= pd)
        dd++;
      break;
    case LAYOUT_LEFT_SYMMETRIC:
      pd = data_disks - rot;
      dd = (pd + 1 + dd) % raid_disks;
      break;
    case LAYOUT_RIGHT_SYMMETRIC:
      pd = rot;
      dd = (pd + 1 + dd) % raid_disks;
      break;
    case LAYOUT_PARITY_0:
      pd = 0;
      dd++;
      break;
    case LAYOUT_PARITY_N:
      pd = data_disks;
      break;
    }
  }
  else {
    switch (algorithm) {
    case LAYOUT_LEFT_ASYMMETRIC:
    case LAYOUT_RIGHT_ASYMMETRIC:
      pd = algorithm == LAYOUT_LEFT_ASYMMETRIC ? raid_disks - 1 - rot : rot;
      qd = pd + 1;
      if (pd == raid_disks - 1) {
        dd++;                   /* Q D D D P */
        qd = 0;
      }
      else if (dd >= pd)
        dd += 2;                /* D D P Q D */
      break;
    case LAYOUT_LEFT_SYMMETRIC:
    case LAYOUT_RIGHT_SYMMETRIC:
      pd = algorithm == LAYOUT_LEFT_SYMMETRIC ? raid_disks - 1 - rot : rot;
      qd = (pd + 1) % raid_disks;
      dd = (pd + 2 + dd) % raid_disks;
      break;
    /* The -6 layouts: md rotates over raid_disks-1, Q on the last. */
    case LAYOUT_LEFT_ASYMMETRIC_6:
      pd = data_disks - (int) (stripe % (raid_disks - 1));
      if (dd >= pd)
        dd++;
      qd = raid_disks - 1;
      break;
    case LAYOUT_RIGHT_ASYMMETRIC_6:
      pd = (int) (stripe % (raid_disks - 1));
      if (dd >= pd)
        dd++;
      qd = raid_disks - 1;
      break;
    case LAYOUT_LEFT_SYMMETRIC_6:
      pd = data_disks - (int) (stripe % (raid_disks - 1));
      dd = (pd + 1 + dd) % (raid_disks - 1);
      qd = raid_disks - 1;
      break;
    case LAYOUT_RIGHT_SYMMETRIC_6:
      pd = (int) (stripe % (raid_disks - 1));
      dd = (pd + 1 + dd) % (raid_disks - 1);
      qd = raid_disks - 1;
      break;
    case LAYOUT_PARITY_0:
      pd = 0;
      qd = 1;
      dd += 2;
      break;
    case LAYOUT_PARITY_N:
      pd = data_disks;
      qd = data_disks + 1;
      break;
    case LAYOUT_PARITY_0_6:
      pd = 0;
      dd++;
      qd = raid_disks - 1;
      break;
    }
  }
  r->dd = dd;
  r->pd = pd;
  r->qd = qd;
  r->sector = stripe * sectors_per_chunk + chunk_offset;
}

/* md raid5.c set_syndrome_sources(): the Q slot of data disk `disk`,
 * counting from raid6_d0() (the disk after Q) and skipping P and Q. */
unsigned
model_syndrome_slot (unsigned disks, int pd, int qd, int disk)
{
  int d0 = qd == (int) disks - 1 ? 0 : qd + 1, i = d0;
  unsigned count = 0;

  do {
    if (i == disk)
      return count;
    if (i != pd && i != qd)
      count++;
    i = i + 1 < (int) disks ? i + 1 : 0;
  } while (i != d0);
  abort ();
}

/* md's only_parity() (raid5.c), per layout, for n members: which
 * roles hold nothing but P or Q, as a bitmask. */
uint64_t
model_only_parity (int level, uint32_t layout, unsigned n)
{
  if (level == 4 || layout == LAYOUT_PARITY_N)
    return level == 6 ? 3ULL << (n - 2) : 1ULL << (n - 1);
  if (layout == LAYOUT_PARITY_0)
    return level == 6 ? 3 : 1;
  if (layout == LAYOUT_PARITY_0_6)
    return 1 | 1ULL << (n - 1);
  if (layout >= LAYOUT_RAID6_OFFSET)
    return 1ULL << (n - 1);
  return 0;
}
