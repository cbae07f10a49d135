/* nbdraid: a set of member roles (a bitmask). */
#ifndef NBDRAID_MEMBER_SET_H
#define NBDRAID_MEMBER_SET_H

#include <stdbool.h>
#include <stdint.h>

#include "geometry.h"

struct member_set {
  uint64_t bits[(RAID_MAX_MEMBERS + 63) / 64];
};

static inline void
member_set_add (struct member_set *s, unsigned m)
{
  s->bits[m / 64] |= 1ULL << (m % 64);
}

static inline bool
member_set_has (const struct member_set *s, unsigned m)
{
  return s->bits[m / 64] >> (m % 64) & 1;
}

static inline unsigned
member_set_count (const struct member_set *s)
{
  unsigned i, n = 0;

  for (i = 0; i < sizeof s->bits / sizeof s->bits[0]; i++)
    n += (unsigned) __builtin_popcountll (s->bits[i]);
  return n;
}

#endif
