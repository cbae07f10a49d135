/* nbdraid: geometry set-up, validation, and level/layout names. */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "geometry.h"

static const struct {
  const char *name;
  uint32_t layout;
} parity_layouts[] = {
  { "left-asymmetric", LAYOUT_LEFT_ASYMMETRIC },
  { "right-asymmetric", LAYOUT_RIGHT_ASYMMETRIC },
  { "left-symmetric", LAYOUT_LEFT_SYMMETRIC },
  { "right-symmetric", LAYOUT_RIGHT_SYMMETRIC },
  /* mdadm's short spellings */
  { "la", LAYOUT_LEFT_ASYMMETRIC },
  { "ra", LAYOUT_RIGHT_ASYMMETRIC },
  { "ls", LAYOUT_LEFT_SYMMETRIC },
  { "rs", LAYOUT_RIGHT_SYMMETRIC },
};
#define N_PARITY_LAYOUTS 4      /* the long names come first */

static bool
is_parity (int level)
{
  return level == 5 || level == 6;
}

int
geometry_parse_level (const char *s, int *level)
{
  if (strncasecmp (s, "raid", 4) == 0)
    s += 4;
  if (strcmp (s, "0") == 0 || strcmp (s, "1") == 0 || strcmp (s, "5") == 0 ||
      strcmp (s, "6") == 0 || strcmp (s, "10") == 0) {
    *level = atoi (s);
    return 0;
  }
  return -1;
}

uint32_t
geometry_default_layout (int level)
{
  if (is_parity (level))
    return LAYOUT_LEFT_SYMMETRIC;
  if (level == 10)
    return RAID10_LAYOUT (2, 1, false);
  return 0;
}

int
geometry_parse_layout (int level, const char *s, uint32_t *layout)
{
  size_t i;

  if (is_parity (level)) {
    for (i = 0; i < sizeof parity_layouts / sizeof parity_layouts[0]; i++)
      if (strcasecmp (s, parity_layouts[i].name) == 0) {
        *layout = parity_layouts[i].layout;
        return 0;
      }
    return -1;
  }
  if (level == 10) {
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
  return -1;
}

const char *
geometry_layout_name (int level, uint32_t layout, char *buf, size_t len)
{
  unsigned near = layout & 0xff, far = (layout >> 8) & 0xff;

  if (is_parity (level) && layout < N_PARITY_LAYOUTS)
    snprintf (buf, len, "%s", parity_layouts[layout].name);
  else if (level == 10 && (layout >> 17) == 0 && near >= 1 && far >= 1 &&
           (near == 1 || far == 1))
    snprintf (buf, len, "%c%u", far == 1 ? 'n' : (layout & (1 << 16)) ? 'o'
              : 'f', far == 1 ? near : far);
  else if (level == 0 || level == 1)
    snprintf (buf, len, "-");
  else
    snprintf (buf, len, "unknown layout 0x%x", layout);
  return buf;
}

unsigned
geometry_min_members (int level, uint32_t layout)
{
  switch (level) {
  case 6:
    return 4;
  case 10:
    return (layout & 0xff) * ((layout >> 8) & 0xff);
  default:
    return 2;
  }
}

static int
init_raid10 (struct raid_geometry *g, char *err, size_t errlen)
{
  uint64_t member_units = g->member_bytes / g->unit_bytes;
  uint64_t array_units, used_units;
  char name[32];

  g->near = g->layout & 0xff;
  g->far = (g->layout >> 8) & 0xff;
  g->far_offset = (g->layout >> 16) & 1;
  /* md's setup_conf() needs at least two copies. */
  if ((g->layout >> 17) != 0 || g->near < 1 || g->far < 1 ||
      (g->near > 1 && g->far > 1) || g->near * g->far < 2) {
    snprintf (err, errlen, "RAID10 layout %s is not supported (n2, n3, f2, "
              "o2 and similar are)",
              geometry_layout_name (10, g->layout, name, sizeof name));
    return -1;
  }
  g->copies = g->near * g->far;
  /* md raid10.c: raid10_size() and calc_sectors(). */
  array_units = member_units / g->far * g->members / g->near;
  used_units = (array_units * g->copies + g->members - 1) / g->members;
  g->far_stride_units = g->far_offset ? 1 : used_units / g->far;
  g->array_bytes = array_units * g->unit_bytes;
  return 0;
}

int
geometry_init (struct raid_geometry *g, char *err, size_t errlen)
{
  unsigned min;
  char name[32];

  if (g->level != 0 && g->level != 1 && !is_parity (g->level) &&
      g->level != 10) {
    snprintf (err, errlen, "RAID level %d is not supported (0, 1, 5, 6 and "
              "10 are)", g->level);
    return -1;
  }
  if (is_parity (g->level) && g->layout >= N_PARITY_LAYOUTS) {
    snprintf (err, errlen, "RAID%d layout %u is not supported (left- and "
              "right-, a- and symmetric are)", g->level, g->layout);
    return -1;
  }
  /* RAID0's layout (original or alternate, feature 0x1000) only matters
   * for md's multi-zone RAID0, which assembly refuses. */
  if ((g->level == 0 && g->layout > 2) || (g->level == 1 && g->layout)) {
    snprintf (err, errlen, "RAID%d layout %u is not supported",
              g->level, g->layout);
    return -1;
  }
  min = geometry_min_members (g->level, g->layout);
  if (g->members < min || g->members > RAID_MAX_MEMBERS) {
    snprintf (err, errlen, "RAID%d %s needs %u to %u members, not %u",
              g->level, geometry_layout_name (g->level, g->layout, name,
                                              sizeof name),
              min, RAID_MAX_MEMBERS, g->members);
    return -1;
  }
  if (g->level == 1)
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

  g->copies = 1;
  g->parity_members = 0;
  g->data_members = g->members;
  switch (g->level) {
  case 0:
    g->array_bytes = g->member_bytes * g->members;
    return 0;
  case 1:
    g->copies = g->members;
    g->data_members = 1;
    g->array_bytes = g->member_bytes;
    return 0;
  case 10:
    g->data_members = 1;
    return init_raid10 (g, err, errlen);
  default:
    g->parity_members = g->level == 5 ? 1 : 2;
    g->data_members = g->members - g->parity_members;
    g->array_bytes = g->member_bytes * g->data_members;
    return 0;
  }
}

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

uint64_t
geometry_sync_bytes (const struct raid_geometry *g)
{
  if (g->parity_members)
    return g->member_bytes;
  return (g->array_bytes + g->unit_bytes - 1) / g->unit_bytes * g->unit_bytes;
}
