/* nbdraid: little-endian loads and stores for on-disk formats. */
#ifndef NBDRAID_LE_H
#define NBDRAID_LE_H

#include <inttypes.h>
#include <stdint.h>

static inline uint16_t
le16_get (const uint8_t *p)
{
  return (uint16_t) (p[0] | p[1] << 8);
}

static inline uint32_t
le32_get (const uint8_t *p)
{
  return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
    (uint32_t) p[3] << 24;
}

static inline uint64_t
le64_get (const uint8_t *p)
{
  return (uint64_t) le32_get (p) | (uint64_t) le32_get (p + 4) << 32;
}

static inline void
le16_put (uint8_t *p, uint16_t v)
{
  p[0] = (uint8_t) v;
  p[1] = (uint8_t) (v >> 8);
}

static inline void
le32_put (uint8_t *p, uint32_t v)
{
  le16_put (p, (uint16_t) v);
  le16_put (p + 2, (uint16_t) (v >> 16));
}

static inline void
le64_put (uint8_t *p, uint64_t v)
{
  le32_put (p, (uint32_t) v);
  le32_put (p + 4, (uint32_t) (v >> 32));
}

#endif
