/* nbdraid: where every array byte lives, for each md level and layout.
 *
 * Pure functions, no I/O.  Offsets here are relative to the start of a
 * member's data area (md's data_offset); the array adds that.
 */
#ifndef NBDRAID_GEOMETRY_H
#define NBDRAID_GEOMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raid.h"

/* RAID1 has no chunk in md; we split requests at this unit so reads
 * spread over the copies. */
#define RAID1_UNIT_BYTES (128 * 1024)
/* A level without a chunk (RAID1): mdadm still rounds the size each
 * member gives to 64 KiB (at create and grow). */
#define UNCHUNKED_ROUND_BYTES (64 * 1024)
#define RAID_MIN_CHUNK_BYTES 4096
#define RAID_MAX_CHUNK_BYTES (1024 * 1024 * 1024ULL)

/* md's RAID5/6 layouts (drivers/md/raid5.h: ALGORITHM_*). */
enum {
  LAYOUT_LEFT_ASYMMETRIC = 0,
  LAYOUT_RIGHT_ASYMMETRIC = 1,
  LAYOUT_LEFT_SYMMETRIC = 2,
  LAYOUT_RIGHT_SYMMETRIC = 3,
  /* Parity fixed on the first disk, or on the last (RAID6: P and Q
   * the first two, or the last two): a RAID4's place, and the layout
   * md gives a RAID0 taken over to RAID4/5 (raid45_takeover_raid0). */
  LAYOUT_PARITY_0 = 4,
  LAYOUT_PARITY_N = 5,
  /* RAID6 only: the RAID5 layout (this less LAYOUT_RAID6_OFFSET) on
   * the first n-1 disks and Q always on the last, so that a RAID5 is
   * taken to RAID6 by adding a Q disk (md's raid6_takeover). */
  LAYOUT_LEFT_ASYMMETRIC_6 = 16,
  LAYOUT_RIGHT_ASYMMETRIC_6 = 17,
  LAYOUT_LEFT_SYMMETRIC_6 = 18,
  LAYOUT_RIGHT_SYMMETRIC_6 = 19,
  LAYOUT_PARITY_0_6 = 20, /* md has no PARITY_N_6: PARITY_N is one */
};
#define LAYOUT_RAID6_OFFSET 16
/* md's RAID10 layout word: near | far << 8 | offset << 16. */
#define RAID10_LAYOUT(near, far, offset) \
  ((near) | (far) << 8 | ((offset) ? 1 << 16 : 0))

#define GEOMETRY_NO_DISK UINT32_MAX

struct raid_geometry {
  /* Inputs, as in the md superblock. */
  int level; /* 0, 1, 4, 5, 6, 10 */
  uint32_t layout;
  unsigned members;             /* raid_disks */
  uint64_t chunk_bytes;         /* ignored for RAID1 */
  uint64_t member_bytes;        /* used bytes of each member's data area */

  /* Derived by geometry_init. */
  const struct raid_level *lvl; /* the level table's entry */
  uint64_t unit_bytes;          /* split unit: chunk, or RAID1_UNIT_BYTES */
  unsigned data_members;        /* parity: data chunks per stripe */
  unsigned parity_members;      /* 0 (copies family), 1 or 2 */
  unsigned copies;              /* copies family: places per chunk */
  unsigned tolerates;           /* members that may fail, any of them */
  unsigned near, far;           /* RAID10 */
  bool far_offset;
  uint64_t far_stride_units;    /* RAID10: member chunks between far copies */
  uint64_t array_bytes;
};

/* One copy of an array unit: member index and unit index within the
 * member's data area. */
struct place {
  unsigned disk;
  uint64_t member_unit;
};

/* The parity family's picture of one stripe. */
struct stripe_map {
  unsigned p_disk;
  unsigned q_disk;                      /* GEOMETRY_NO_DISK for RAID5 */
  unsigned data_disk[RAID_MAX_MEMBERS]; /* data index -> member */
  unsigned q_coef[RAID_MAX_MEMBERS];    /* data index -> Q exponent */
  /* Blocks numbered as the parity code sees them: 0..d-1 data in Q
   * order, d = P, d+1 = Q; block -> member. */
  unsigned block_disk[RAID_MAX_MEMBERS + 2];
};

/* Validate the inputs and fill in the derived fields.  Returns 0, or -1
 * with the reason in err. */
int geometry_init (struct raid_geometry *g, char *err, size_t errlen);

/* Copies family (RAID0, RAID1, RAID10): every place holding array unit
 * `unit`, primary copy first.  Returns g->copies. */
unsigned geometry_unit_places (const struct raid_geometry *g, uint64_t unit,
                               struct place *places);

/* Copies family, the other way: which array unit member `disk` holds at
 * member unit `member_unit` (md's raid10_find_virt).  False if that
 * place holds no unit (space past the end of the array). */
bool geometry_unit_at (const struct raid_geometry *g, unsigned disk,
                       uint64_t member_unit, uint64_t *unit);

/* Parity family (RAID4, RAID5, RAID6): the members of stripe `stripe`.  Array
 * unit u belongs to stripe u / data_members, data index u % data_members,
 * and sits at member unit `stripe` on its disk. */
void geometry_stripe_map (const struct raid_geometry *g, uint64_t stripe,
                          struct stripe_map *map);

/* Bytes of the space resync and the bitmap cover: each member's data
 * area for parity levels, the array (in whole units) for copies. */
uint64_t geometry_sync_bytes (const struct raid_geometry *g);
/* Does role m of a parity geometry hold parity alone, P or Q in every
 * stripe (RAID4's last disk, parity-first's first, a -6 layout's Q)?
 * md's only_parity(): a dirty array missing only such roles has no
 * write hole, its data is all there. */
bool geometry_role_only_parity (const struct raid_geometry *g, unsigned m);

/* Copies family: the roles holding a copy of some unit role m holds,
 * m excluded, as bits (bit p of partners[p / 64], as in
 * geometry_survives; (members + 63) / 64 words are set).  RAID1: every
 * other role; RAID10 n2 over an even count: m's pair; n2 over an odd
 * count, f2 or o2: the roles either side; more copies, more roles.
 * RAID0 and the parity levels: none. */
void geometry_role_partners (const struct raid_geometry *g, unsigned m,
                             uint64_t *partners);

/* Whether every array byte stays readable without the members in gone
 * (a bitmask, as in member-set.h: bit m of gone[m / 64]). */
bool geometry_survives (const struct raid_geometry *g,
                        const uint64_t *gone);

#endif
