/* nbdraid: which member of a RAID6 stripe holds wrong bytes, from its
 * two syndromes, as md's raid6check locates it (H. Peter Anvin, "The
 * mathematics of RAID-6", section 4).
 *
 * With P and Q recomputed from the stored data, the syndromes are
 * Sp = P ^ P' and Sq = Q ^ Q', byte by byte.  One wrong data block z,
 * off by e, gives Sp = e and Sq = 2^z * e, so z = log2 (Sq / Sp); a
 * wrong P gives Sp alone, a wrong Q Sq alone.  Every byte that differs
 * must name the same block, or no one block explains the difference.
 * The GF(2^8) arithmetic is ISA-L's.
 */
#include <config.h>

#include <isa-l/erasure_code.h>

#include "parity.h"

void
parity_locate_init (struct parity_code *c)
{
  unsigned char x = 1;
  unsigned j;

  /* 2 generates GF(2^8) under md's polynomial 0x11d: 2^0..2^254 are
   * every nonzero element once. */
  for (j = 0; j < 255; j++) {
    c->log2[x] = (uint8_t) j;
    x = gf_mul (x, 2);
  }
}

/* The block one differing byte names: data z, P (data) or Q (data + 1),
 * or PARITY_UNLOCATED when z is past the data blocks. */
static int
byte_culprit (const struct parity_code *c, uint8_t sp, uint8_t sq)
{
  unsigned z;

  if (sq == 0)
    return (int) c->data;
  if (sp == 0)
    return (int) c->data + 1;
  z = c->log2[gf_mul (sq, gf_inv (sp))];
  return z < c->data ? (int) z : PARITY_UNLOCATED;
}

int
parity_culprit (const struct parity_code *c, size_t len, const uint8_t *p,
               const uint8_t *q, const uint8_t *p2, const uint8_t *q2)
{
  int culprit = PARITY_AGREE, who;
  size_t i;

  for (i = 0; i < len; i++) {
    uint8_t sp = p[i] ^ p2[i], sq = q[i] ^ q2[i];

    if (sp == 0 && sq == 0)
      continue;
    who = byte_culprit (c, sp, sq);
    if (who == PARITY_UNLOCATED || (culprit != PARITY_AGREE && who != culprit))
      return PARITY_UNLOCATED;
    culprit = who;
  }
  return culprit;
}
