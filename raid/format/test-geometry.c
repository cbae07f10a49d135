/* nbdraid: test geometry_init, geometry_unit_places,
 * geometry_role_partners and geometry_stripe_map against slow models
 * transcribed from md (md-layout.h).  For every unit of each array the
 * engine's places must equal the model's, lie inside the member and
 * never collide.
 */
#include <config.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geometry.h"
#include "md-layout.h"
#include "raid.h"
#include "test-report.h"

#define SECTOR 512
#define ELEMS(a) (sizeof (a) / sizeof (a)[0])


/* "raid6 left-asymmetric n=5 chunk=64K member=2368K" */
static const char *
describe (const struct raid_geometry *g, char *buf, size_t len)
{
  char name[64], chunk[32] = "";

  if (g->level != 1)
    snprintf (chunk, sizeof chunk, " chunk=%" PRIu64 "K",
              g->chunk_bytes / 1024);
  snprintf (buf, len, "raid%d %s n=%u%s member=%" PRIu64 "K", g->level,
            raid_layout_name (g->level, g->layout, name, sizeof name),
            g->members, chunk, g->member_bytes / 1024);
  return buf;
}

/* ---- checks ------------------------------------------------------- */

/* Who sits at each (disk, member unit): a collision is a bug. */
struct owner {
  char kind;                    /* 0 free, 'U' array unit, 'P', 'Q' */
  uint64_t id;                  /* array unit, or stripe of P and Q */
};

struct occupancy {
  unsigned disks;
  uint64_t units;
  struct owner *owner;
};

static void
occupancy_init (struct occupancy *o, unsigned disks, uint64_t units)
{
  o->disks = disks;
  o->units = units;
  o->owner = calloc ((size_t) disks * units, sizeof *o->owner);
  if (!o->owner) {
    perror ("calloc");
    exit (EXIT_FAILURE);
  }
}

static const char *
owner_name (struct owner w, char *buf, size_t len)
{
  if (w.kind == 'U')
    snprintf (buf, len, "unit %" PRIu64, w.id);
  else
    snprintf (buf, len, "%c of stripe %" PRIu64, w.kind, w.id);
  return buf;
}

/* Records w at place (disk, member_unit); false if that is outside
 * the members or already taken. */
static bool
occupy (struct occupancy *o, const char *desc, struct owner w,
        unsigned disk, uint64_t member_unit)
{
  char name[64], other[64];
  struct owner *slot;

  owner_name (w, name, sizeof name);
  if (disk >= o->disks || member_unit >= o->units) {
    fail ("%s %s: place disk %u unit %" PRIu64 " is outside the %u "
          "members of %" PRIu64 " units", desc, name, disk, member_unit,
          o->disks, o->units);
    return false;
  }
  slot = &o->owner[disk * o->units + member_unit];
  if (slot->kind) {
    fail ("%s %s: place disk %u unit %" PRIu64 " is already taken by %s",
          desc, name, disk, member_unit,
          owner_name (*slot, other, sizeof other));
    return false;
  }
  *slot = w;
  return true;
}

static bool
init_ok (struct raid_geometry *g, const char *desc)
{
  char err[256];

  if (geometry_init (g, err, sizeof err) == -1) {
    fail ("%s: geometry_init refused: %s", desc, err);
    return false;
  }
  return true;
}

static bool
expect_u64 (const char *desc, const char *field, uint64_t got,
            uint64_t want)
{
  if (got != want)
    fail ("%s: %s is %" PRIu64 ", model %" PRIu64, desc, field, got, want);
  return got == want;
}

/* The model's places of array unit u for RAID0, RAID1 and RAID10. */
static unsigned
model_copies_places (const struct raid_geometry *g,
                     const struct model_r10 *r10, uint64_t u,
                     struct model_place *mp)
{
  uint64_t chunk_sects = g->unit_bytes / SECTOR;
  unsigned i;

  switch (g->level) {
  case 0:
    model_raid0 (g->members, chunk_sects, u * chunk_sects, mp);
    return 1;
  case 1:
    /* Every mirror holds the array at the same offset. */
    for (i = 0; i < g->members; i++)
      mp[i] = (struct model_place) { i, u * chunk_sects };
    return g->members;
  default:
    return model_raid10_find_phys (r10, u * chunk_sects, mp);
  }
}

static uint64_t
model_copies_array_bytes (const struct raid_geometry *g,
                          const struct model_r10 *r10)
{
  uint64_t chunk_sects = g->chunk_bytes / SECTOR;
  uint64_t member_sectors = g->member_bytes / SECTOR;

  switch (g->level) {
  case 0:
    return member_sectors / chunk_sects * chunk_sects * g->members * SECTOR;
  case 1:
    return g->member_bytes;
  default:
    return r10->array_sectors * SECTOR;
  }
}

/* Compare one array unit's places with the model's. */
static bool
check_unit_places (const struct raid_geometry *g, const char *desc,
                   struct occupancy *occ, uint64_t u,
                   const struct model_place *mp, unsigned mcopies)
{
  uint64_t unit_sects = g->unit_bytes / SECTOR;
  struct place places[RAID_MAX_MEMBERS];
  unsigned copies, c, c2;

  copies = geometry_unit_places (g, u, places);
  if (copies != mcopies) {
    fail ("%s unit %" PRIu64 ": %u places, model %u", desc, u, copies,
          mcopies);
    return false;
  }
  for (c = 0; c < copies; c++) {
    if (places[c].disk != mp[c].dev ||
        places[c].member_unit * unit_sects != mp[c].sector) {
      fail ("%s unit %" PRIu64 " copy %u: got disk %u offset %" PRIu64
            ", model disk %u offset %" PRIu64 " (%" PRIu64 " sectors)",
            desc, u, c, places[c].disk, places[c].member_unit, mp[c].dev,
            mp[c].sector / unit_sects, mp[c].sector);
      return false;
    }
    if (places[c].member_unit * g->unit_bytes >= g->member_bytes) {
      fail ("%s unit %" PRIu64 " copy %u: member unit %" PRIu64
            " is past the member end", desc, u, c, places[c].member_unit);
      return false;
    }
    for (c2 = 0; c2 < c; c2++)
      if (places[c2].disk == places[c].disk) {
        fail ("%s unit %" PRIu64 ": copies %u and %u both on disk %u",
              desc, u, c2, c, places[c].disk);
        return false;
      }
    if (!occupy (occ, desc, (struct owner) { 'U', u }, places[c].disk,
                 places[c].member_unit))
      return false;
  }
  return true;
}

#define SET_WORDS ((RAID_MAX_MEMBERS + 63) / 64)

/* Arrays whose roles' partners were checked. */
static unsigned partnered_arrays;

/* Each role's partners as geometry_role_partners gives them against
 * want, the roles the model put beside it in the array's units. */
static void
check_partners (const struct raid_geometry *g, const char *desc,
                uint64_t want[][SET_WORDS])
{
  uint64_t got[SET_WORDS];
  unsigned m, w;

  for (m = 0; m < g->members; m++) {
    geometry_role_partners (g, m, got);
    for (w = 0; w < (g->members + 63) / 64; w++)
      if (got[w] != want[m][w]) {
        fail ("%s: role %u's partners (word %u) are %#" PRIx64
              ", model %#" PRIx64,
              desc, m, w, got[w], want[m][w]);
        return;
      }
  }
}

/* Add to want the partners the model's places of one unit make. */
static void
model_partners (const struct model_place *mp, unsigned copies,
                uint64_t want[][SET_WORDS])
{
  unsigned c, c2;

  for (c = 0; c < copies; c++)
    for (c2 = 0; c2 < copies; c2++)
      if (mp[c2].dev != mp[c].dev)
        want[mp[c].dev][mp[c2].dev / 64] |= 1ULL << (mp[c2].dev % 64);
}

/* RAID0, RAID1, RAID10: every unit of one array, and, where the array
 * has a unit starting on every member (a whole period of the layout),
 * each role's partners.  Returns units checked. */
static uint64_t
check_copies_array (struct raid_geometry *g)
{
  static uint64_t want[RAID_MAX_MEMBERS][SET_WORDS];
  struct model_place mp[RAID_MAX_MEMBERS];
  struct model_r10 r10 = { 0 };
  struct occupancy occ;
  char desc[128];
  uint64_t u, units;

  describe (g, desc, sizeof desc);
  if (!init_ok (g, desc))
    return 0;
  if (g->level == 10) {
    model_raid10_setup (&r10, g->layout, g->members,
                        g->chunk_bytes / SECTOR, g->member_bytes / SECTOR);
    if (!expect_u64 (desc, "copies", g->copies,
                     r10.near_copies * r10.far_copies) ||
        !expect_u64 (desc, "far_stride_units",
                     g->far_stride_units * g->unit_bytes / SECTOR,
                     r10.stride))
      return 0;
  }
  if (!expect_u64 (desc, "unit_bytes", g->unit_bytes,
                   g->level == 1 ? RAID1_UNIT_BYTES : g->chunk_bytes) ||
      !expect_u64 (desc, "array_bytes", g->array_bytes,
                   model_copies_array_bytes (g, &r10)))
    return 0;

  units = (g->array_bytes + g->unit_bytes - 1) / g->unit_bytes;
  occupancy_init (&occ, g->members,
                  (g->member_bytes + g->unit_bytes - 1) / g->unit_bytes);
  memset (want, 0, sizeof want);
  for (u = 0; u < units; u++) {
    unsigned mcopies = model_copies_places (g, &r10, u, mp);

    if (!check_unit_places (g, desc, &occ, u, mp, mcopies))
      break;
    model_partners (mp, mcopies, want);
  }
  free (occ.owner);
  if (u == units && units >= g->members) {
    check_partners (g, desc, want);
    partnered_arrays++;
  }
  return u;
}

/* One stripe of a RAID5/6 array against the model: P, Q, every data
 * disk, the member offset and the Q coefficients. */
static bool
check_stripe (const struct raid_geometry *g, const char *desc,
              struct occupancy *occ, uint64_t stripe)
{
  uint64_t chunk_sects = g->chunk_bytes / SECTOR;
  unsigned d = g->data_members, i;
  struct stripe_map map;
  struct model_r5 r;

  geometry_stripe_map (g, stripe, &map);
  for (i = 0; i < d; i++) {
    uint64_t u = stripe * d + i;

    model_raid5_compute_sector (g->level, g->layout, g->members, chunk_sects,
                                u * chunk_sects, &r);
    if (map.data_disk[i] != (unsigned) r.dd ||
        stripe != r.sector / chunk_sects) {
      fail ("%s unit %" PRIu64 ": got disk %u offset %" PRIu64
            ", model disk %d offset %" PRIu64, desc, u, map.data_disk[i],
            stripe, r.dd, r.sector / chunk_sects);
      return false;
    }
    if (map.p_disk != (unsigned) r.pd ||
        map.q_disk != (r.qd == -1 ? GEOMETRY_NO_DISK : (unsigned) r.qd)) {
      fail ("%s stripe %" PRIu64 ": got P disk %u Q disk %d, model P %d "
            "Q %d", desc, stripe, map.p_disk, (int) map.q_disk, r.pd, r.qd);
      return false;
    }
    if (g->level == 6 &&
        map.q_coef[i] != model_syndrome_slot (g->members, r.pd, r.qd, r.dd)) {
      fail ("%s stripe %" PRIu64 " data %u (disk %d): got Q coefficient "
            "2^%u, model 2^%u", desc, stripe, i, r.dd, map.q_coef[i],
            model_syndrome_slot (g->members, r.pd, r.qd, r.dd));
      return false;
    }
    if (!occupy (occ, desc, (struct owner) { 'U', u }, map.data_disk[i],
                 stripe))
      return false;
  }
  if (!occupy (occ, desc, (struct owner) { 'P', stripe }, map.p_disk,
               stripe) ||
      (g->level == 6 &&
       !occupy (occ, desc, (struct owner) { 'Q', stripe }, map.q_disk,
                stripe)))
    return false;
  return true;
}

/* RAID5, RAID6: every stripe of one array.  Returns units checked. */
static uint64_t
check_parity_array (struct raid_geometry *g)
{
  uint64_t stripes, s;
  struct occupancy occ;
  char desc[128];
  unsigned d;

  describe (g, desc, sizeof desc);
  if (!init_ok (g, desc))
    return 0;
  d = g->members - (g->level == 6 ? 2 : 1);
  stripes = g->member_bytes / g->chunk_bytes;
  /* md raid5.c raid5_size(): member size in whole chunks times data
   * disks. */
  if (!expect_u64 (desc, "unit_bytes", g->unit_bytes, g->chunk_bytes) ||
      !expect_u64 (desc, "data_members", g->data_members, d) ||
      !expect_u64 (desc, "parity_members", g->parity_members,
                   g->members - d) ||
      !expect_u64 (desc, "array_bytes", g->array_bytes,
                   stripes * g->chunk_bytes * d))
    return 0;

  occupancy_init (&occ, g->members, stripes);
  for (s = 0; s < stripes; s++)
    if (!check_stripe (g, desc, &occ, s))
      break;
  free (occ.owner);
  return s * d;
}

static const uint64_t chunk_sizes[] = { 4096, 64 * 1024, 1024 * 1024 };
/* Member sizes in chunks: odd sizes make RAID10's array-chunk count
 * no multiple of the member count; 37 and 131 stripes rotate parity
 * over 16 disks several times. */
static const uint64_t member_chunks[] = { 3, 8, 37, 131 };
static const uint32_t raid10_layouts[] = {
  RAID10_LAYOUT (2, 1, false), RAID10_LAYOUT (3, 1, false),
  RAID10_LAYOUT (1, 2, false), RAID10_LAYOUT (1, 2, true),
};


/* Checks one array of the copies or parity family; returns units
 * checked. */
static uint64_t
check_array (int level, uint32_t layout, unsigned members,
             uint64_t chunk_bytes, uint64_t member_bytes)
{
  struct raid_geometry g = {
    .level = level, .layout = layout, .members = members,
    .chunk_bytes = chunk_bytes, .member_bytes = member_bytes,
  };

  if (level >= 4 && level <= 6) {
    static uint64_t none[RAID_MAX_MEMBERS][SET_WORDS];
    uint64_t units = check_parity_array (&g);

    if (units) /* g is initialised */
      check_partners (&g, "parity: no partners", none);
    return units;
  }
  return check_copies_array (&g);
}

/* Every level, layout, member count, chunk and member size.  Returns
 * the number of arrays checked; adds units to *units. */
static unsigned
check_all_arrays (uint64_t *units)
{
  unsigned arrays = 0, n, c, m, l;

  for (n = 2; n <= 16; n++)
    for (c = 0; c < ELEMS (chunk_sizes); c++)
      for (m = 0; m < ELEMS (member_chunks); m++) {
        uint64_t chunk = chunk_sizes[c], size = member_chunks[m] * chunk;

        *units += check_array (0, 0, n, chunk, size);
        arrays++;
        *units += check_array (4, 0, n, chunk, size);
        *units += check_array (4, LAYOUT_PARITY_N, n, chunk, size);
        arrays += 2;
        for (l = 0; l <= LAYOUT_PARITY_N; l++) {
          *units += check_array (5, l, n, chunk, size);
          arrays++;
          if (n >= 4) {
            *units += check_array (6, l, n, chunk, size);
            arrays++;
          }
          if (n >= 4 && l <= LAYOUT_PARITY_0) {
            *units += check_array (6, l + LAYOUT_RAID6_OFFSET, n, chunk,
                                   size);
            arrays++;
          }
        }
        for (l = 0; l < ELEMS (raid10_layouts); l++)
          if (n >= ((raid10_layouts[l] & 0xff) *
                    ((raid10_layouts[l] >> 8) & 0xff))) {
            *units += check_array (10, raid10_layouts[l], n, chunk, size);
            arrays++;
          }
      }

  /* RAID1 has no chunk; all but the first size end in a partial unit. */
  for (n = 2; n <= 16; n++)
    for (m = 0; m < ELEMS (member_chunks); m++) {
      *units += check_array (1, 0, n, 0, member_chunks[m] * RAID1_UNIT_BYTES
                             + 4096 * m);
      arrays++;
    }
  return arrays;
}

/* ---- roles that hold parity alone -------------------------------- */

static unsigned
check_only_parity (void)
{
  static const struct {
    int level;
    uint32_t layout;
  } layouts[] = {
    { 4, 0 }, { 4, 5 }, { 5, 0 }, { 5, 2 },  { 5, 4 },  { 5, 5 },  { 6, 1 },
    { 6, 3 }, { 6, 4 }, { 6, 5 }, { 6, 16 }, { 6, 18 }, { 6, 20 },
  };
  unsigned checked = 0, n, m;
  size_t i;

  for (i = 0; i < ELEMS (layouts); i++)
    for (n = 4; n <= 9; n++) {
      struct raid_geometry g = {
        .level = layouts[i].level,
        .layout = layouts[i].layout,
        .members = n,
        .chunk_bytes = 65536,
        .member_bytes = 1 << 20,
      };
      char err[256], buf[128];
      uint64_t want = model_only_parity (g.level, g.layout, n);

      if (geometry_init (&g, err, sizeof err) == -1) {
        fail ("%s", err);
        continue;
      }
      for (m = 0; m < n; m++, checked++)
        if (geometry_role_only_parity (&g, m) != (bool)(want >> m & 1))
          fail ("%s: role %u %s parity alone", describe (&g, buf, sizeof buf),
                m, want >> m & 1 ? "holds" : "does not hold");
    }
  return checked;
}

/* ---- refusals ---------------------------------------------------- */

static void
check_refused (const char *what, int level, uint32_t layout,
               unsigned members, uint64_t chunk_bytes)
{
  struct raid_geometry g = {
    .level = level, .layout = layout, .members = members,
    .chunk_bytes = chunk_bytes, .member_bytes = 64 * 1024 * 1024,
  };
  char err[256] = "";

  if (geometry_init (&g, err, sizeof err) == 0)
    fail ("geometry_init accepted %s", what);
  else if (err[0] == '\0')
    fail ("geometry_init refused %s without a reason", what);
}

static unsigned
check_refusals (void)
{
  static const struct {
    const char *what;
    int level;
    uint32_t layout;
    unsigned members;
    uint64_t chunk_bytes;
  } bad[] = {
    { "RAID6 with 3 members", 6, LAYOUT_LEFT_SYMMETRIC, 3, 65536 },
    { "RAID5 with 1 member", 5, LAYOUT_LEFT_SYMMETRIC, 1, 65536 },
    { "RAID10 n2 with 1 member", 10, 0x102, 1, 65536 },
    { "RAID10 n3 with 2 members", 10, 0x103, 2, 65536 },
    { "RAID10 f2 with 1 member", 10, 0x201, 1, 65536 },
    { "RAID10 o2 with 1 member", 10, 0x10201, 1, 65536 },
    { "RAID0 with 129 members", 0, 0, RAID_MAX_MEMBERS + 1, 65536 },
    { "chunk 12288 (not a power of two)", 5, LAYOUT_LEFT_SYMMETRIC, 3, 12288 },
    { "chunk 2048 (below 4K)", 0, 0, 2, 2048 },
    { "chunk 0", 10, 0x102, 2, 0 },
    { "RAID4 layout 1", 4, 1, 3, 65536 },
    { "RAID5 left-symmetric-6 (18)", 5, 18, 3, 65536 },
    { "RAID5 ddf-zero-restart (8)", 5, 8, 3, 65536 },
    { "RAID6 parity-last-6 (21: md has none)", 6, 21, 4, 65536 },
    { "RAID10 n2 far-sets (bit 17)", 10, 0x20102, 4, 65536 },
    { "RAID10 with near and far copies (0x202)", 10, 0x202, 4, 65536 },
    /* md raid10.c setup_conf(): "copies < 2" is an unsupported layout */
    { "RAID10 with one copy (0x101)", 10, 0x101, 2, 65536 },
    { "RAID10 near 0 (0x100)", 10, 0x100, 2, 65536 },
    { "RAID10 far 0 (0x002)", 10, 0x002, 2, 65536 },
  };
  size_t i;

  for (i = 0; i < ELEMS (bad); i++)
    check_refused (bad[i].what, bad[i].level, bad[i].layout, bad[i].members,
                   bad[i].chunk_bytes);
  return ELEMS (bad);
}

int
main (void)
{
  uint64_t units = 0;
  unsigned arrays, refusals, roles;

  arrays = check_all_arrays (&units);
  refusals = check_refusals ();
  roles = check_only_parity ();
  if (failures) {
    printf ("test-geometry: %u failures\n", failures);
    return EXIT_FAILURE;
  }
  printf ("test-geometry: %u arrays (RAID0/1/4/5/6/10, 2-16 members, chunks "
          "4K-1M) and %" PRIu64 " units match md's model, no place "
          "collides; in %u of them each role's partners are the roles "
          "beside it in some unit; %u bad geometries refused; %u roles "
          "hold parity alone or not as md's only_parity says\n",
          arrays, units, partnered_arrays, refusals, roles);
  return EXIT_SUCCESS;
}
