/* nbdraid: test parity_encode, parity_update and parity_buffers_alloc
 * against a naive GF(2^8): bitwise multiplication modulo 0x11d with
 * generator 2, so Q = sum of 2^k * D_k (md's RAID6, lib/raid6/ in
 * Linux, after H. Peter Anvin's "The mathematics of RAID-6").
 *
 * parity_culprit, against the same reference: one corrupted block of a
 * RAID6 column (data, P or Q) is named, two are not.
 *
 * Every buffer handed to the engine starts 1, 16 or 48 bytes past a
 * 64-byte boundary and is followed by guard bytes that must survive.
 */
#include <config.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity.h"
#include "test-report.h"

#define MAX_DATA 20
#define GUARD 64
#define GUARD_BYTE 0xa5


/* ---- naive GF(2^8) ------------------------------------------------ */

/* Shift-and-add multiplication, reducing by x^8+x^4+x^3+x^2+1. */
static uint8_t
gf_mul_slow (uint8_t a, uint8_t b)
{
  unsigned product = 0, x = a;

  for (; b; b >>= 1) {
    if (b & 1)
      product ^= x;
    x <<= 1;
    if (x & 0x100)
      x ^= 0x11d;
  }
  return (uint8_t) product;
}

static uint8_t
gf_pow2 (unsigned k)
{
  uint8_t r = 1;

  while (k--)
    r = gf_mul_slow (r, 2);
  return r;
}

/* mul[k][x] = 2^k * x, filled from gf_mul_slow so the reference stays
 * naive but runs fast enough under valgrind. */
static uint8_t mul[MAX_DATA][256];

static void
init_mul_tables (void)
{
  unsigned k, x;

  for (k = 0; k < MAX_DATA; k++)
    for (x = 0; x < 256; x++)
      mul[k][x] = gf_mul_slow (gf_pow2 (k), (uint8_t) x);
}

/* P and Q of data[0..k-1], byte by byte. */
static void
reference_parity (unsigned k, size_t len, uint8_t *const *data,
                  uint8_t *p, uint8_t *q)
{
  size_t b;
  unsigned j;

  for (b = 0; b < len; b++) {
    uint8_t pb = 0, qb = 0;

    for (j = 0; j < k; j++) {
      pb ^= data[j][b];
      qb ^= mul[j][data[j][b]];
    }
    p[b] = pb;
    q[b] = qb;
  }
}

/* ---- misaligned, guarded buffers ---------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

/* splitmix64: fixed seed, so every run tests the same data. */
static uint64_t
rng (void)
{
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static void
fill_random (uint8_t *buf, size_t len)
{
  size_t i;

  for (i = 0; i < len; i++)
    buf[i] = (uint8_t) rng ();
}

static const size_t misalignments[] = { 1, 16, 48 };
#define N_MISALIGN (sizeof misalignments / sizeof misalignments[0])

/* A buffer of len bytes starting `misalign` bytes past a 64-byte
 * boundary, with GUARD bytes of GUARD_BYTE on both sides. */
struct guarded {
  void *block;
  uint8_t *buf;
  size_t len;
};

static void
guarded_alloc (struct guarded *g, size_t len, size_t misalign)
{
  if (posix_memalign (&g->block, 64, len + 2 * GUARD + 64) != 0) {
    perror ("posix_memalign");
    exit (EXIT_FAILURE);
  }
  memset (g->block, GUARD_BYTE, len + 2 * GUARD + 64);
  g->buf = (uint8_t *) g->block + GUARD + misalign;
  g->len = len;
}

static bool
guards_intact (const struct guarded *g)
{
  size_t i;

  for (i = 0; i < GUARD; i++)
    if (g->buf[-1 - (ptrdiff_t) i] != GUARD_BYTE ||
        g->buf[g->len + i] != GUARD_BYTE)
      return false;
  return true;
}

/* k data blocks and 2 parity blocks, each at its own misalignment,
 * plus the reference P and Q. */
struct stripe {
  unsigned k;
  size_t len;
  struct guarded blocks[MAX_DATA + 2];
  uint8_t *data[MAX_DATA], *parity[2];
  uint8_t *p, *q;
};

/* Rotation N_MISALIGN aligns every buffer to 64 bytes, which takes
 * ISA-L's xor_gen/pq_gen; ALIKE + m misaligns every buffer by
 * misalignments[m], which takes them between ec_encode_data's edges
 * (client data sits 16 bytes past a 64-byte boundary); other rotations
 * misalign the buffers differently, which takes ec_encode_data. */
#define ALIKE 1000

static size_t
misalignment (unsigned j, unsigned rotation)
{
  if (rotation >= ALIKE)
    return misalignments[(rotation - ALIKE) % N_MISALIGN];
  return rotation == N_MISALIGN ? 0
    : misalignments[(j + rotation) % N_MISALIGN];
}

static void
stripe_alloc (struct stripe *s, unsigned k, size_t len, unsigned rotation)
{
  unsigned j;

  s->k = k;
  s->len = len;
  for (j = 0; j < k + 2; j++)
    guarded_alloc (&s->blocks[j], len, misalignment (j, rotation));
  for (j = 0; j < k; j++) {
    s->data[j] = s->blocks[j].buf;
    fill_random (s->data[j], len);
  }
  s->parity[0] = s->blocks[k].buf;
  s->parity[1] = s->blocks[k + 1].buf;
  s->p = malloc (len);
  s->q = malloc (len);
  if (!s->p || !s->q) {
    perror ("malloc");
    exit (EXIT_FAILURE);
  }
}

static void
stripe_free (struct stripe *s)
{
  unsigned j;

  for (j = 0; j < s->k + 2; j++)
    free (s->blocks[j].block);
  free (s->p);
  free (s->q);
}

/* Engine parity (and every guard) against the reference. */
static void
check_parity (struct stripe *s, unsigned parity, const char *what)
{
  const uint8_t *want[2] = { s->p, s->q };
  unsigned j, r;
  size_t b;

  reference_parity (s->k, s->len, s->data, s->p, s->q);
  for (r = 0; r < parity; r++)
    for (b = 0; b < s->len; b++)
      if (s->parity[r][b] != want[r][b]) {
        fail ("%s parity=%u k=%u len=%zu: %c byte %zu is 0x%02x, "
              "reference 0x%02x", what, parity, s->k, s->len, "PQ"[r], b,
              s->parity[r][b], want[r][b]);
        return;
      }
  for (j = 0; j < s->k + parity; j++)
    if (!guards_intact (&s->blocks[j])) {
      fail ("%s parity=%u k=%u len=%zu: bytes around block %u (at "
            "offset %zu mod 64) were overwritten", what, parity, s->k,
            s->len, j, (size_t) ((uintptr_t) s->blocks[j].buf % 64));
      return;
    }
}

static void
code_init (struct parity_code *c, unsigned k, unsigned parity)
{
  if (parity_init (c, k, parity) == -1) {
    perror ("parity_init");
    exit (EXIT_FAILURE);
  }
}

/* ---- the checks --------------------------------------------------- */

static const size_t lengths[] = { 4096, 65536 };

/* Lengths for encoding: also ones that leave edges after the aligned
 * middle, and one too short to have a middle at all. */
static const size_t encode_lengths[] = { 40, 100, 4096, 4136, 65536 };

/* parity_encode for P and P+Q, 1..20 data blocks, every misalignment
 * rotation.  Returns the number of encodings checked. */
static unsigned
check_encode (void)
{
  const size_t nl = sizeof encode_lengths / sizeof encode_lengths[0];
  unsigned parity, k, l, r, n = 0;

  for (parity = 1; parity <= 2; parity++)
    for (k = 1; k <= MAX_DATA; k++)
      for (l = 0; l < nl; l++)
        for (r = 0; r <= 2 * N_MISALIGN; r++) {
          unsigned rot = r <= N_MISALIGN ? r : ALIKE + r - N_MISALIGN - 1;
          struct parity_code code;
          struct stripe s;

          code_init (&code, k, parity);
          stripe_alloc (&s, k, encode_lengths[l], rot);
          parity_encode (&code, s.len, s.data, s.parity);
          check_parity (&s, parity, "parity_encode");
          stripe_free (&s);
          parity_free (&code);
          n++;
        }
  return n;
}

/* Read-modify-write of block i: from the parity of the old data,
 * folding in the old then the new block must give the parity of the
 * new data. */
static void
check_one_update (unsigned parity, unsigned k, size_t len, unsigned i)
{
  struct parity_code code;
  struct guarded new_block;
  struct stripe s;
  char what[64];

  code_init (&code, k, parity);
  stripe_alloc (&s, k, len, i);
  reference_parity (k, len, s.data, s.p, s.q);
  memcpy (s.parity[0], s.p, len);
  memcpy (s.parity[1], s.q, len);
  guarded_alloc (&new_block, len, misalignments[(i + 1) % N_MISALIGN]);
  fill_random (new_block.buf, len);

  parity_update (&code, len, i, s.data[i], s.parity);
  parity_update (&code, len, i, new_block.buf, s.parity);
  memcpy (s.data[i], new_block.buf, len);
  snprintf (what, sizeof what, "parity_update of block %u", i);
  check_parity (&s, parity, what);

  free (new_block.block);
  stripe_free (&s);
  parity_free (&code);
}

/* Every block of small stripes, the first, a middle and the last
 * block of larger ones.  Returns the number of updates checked. */
static unsigned
check_update (void)
{
  static const unsigned ks[] = { 1, 2, 3, 4, 7, 14, 20 };
  unsigned parity, kk, l, i, n = 0;

  for (parity = 1; parity <= 2; parity++)
    for (kk = 0; kk < sizeof ks / sizeof ks[0]; kk++)
      for (l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
        unsigned k = ks[kk];

        for (i = 0; i < k; i++)
          if (k <= 4 || i == 0 || i == k / 2 || i == k - 1) {
            check_one_update (parity, k, lengths[l], i);
            n++;
          }
      }
  return n;
}

/* n buffers of len bytes: distinct, disjoint, usable to the last byte,
 * page-aligned (whatever the skew) or staggered by 256 bytes within the
 * page and skewed by skew bytes. */
static void
check_one_alloc (size_t n, size_t len, bool page_aligned, size_t skew)
{
  uint8_t *bufs[MAX_DATA + 2], *block;
  size_t i, j, b;

  block = parity_buffers_alloc (n, len, page_aligned, skew, bufs);
  if (!block) {
    fail ("parity_buffers_alloc (%zu, %zu, %d) returned NULL", n, len,
          page_aligned);
    return;
  }
  for (i = 0; i < n; i++) {
    size_t want = page_aligned ? 0 : i * 256 % 4096 + skew;

    if ((uintptr_t) bufs[i] % 4096 != want) {
      fail ("parity_buffers_alloc (%zu, %zu, %s): buffer %zu is at page "
            "offset %zu, want %zu", n, len,
            page_aligned ? "page-aligned" : "staggered", i,
            (size_t) ((uintptr_t) bufs[i] % 4096), want);
      goto out;
    }
    for (j = 0; j < i; j++)
      if (bufs[i] < bufs[j] + len && bufs[j] < bufs[i] + len) {
        fail ("parity_buffers_alloc (%zu, %zu): buffers %zu and %zu "
              "overlap", n, len, j, i);
        goto out;
      }
  }
  /* Fill every byte (valgrind checks the bounds), then read back. */
  for (i = 0; i < n; i++)
    memset (bufs[i], (int) i + 1, len);
  for (i = 0; i < n; i++)
    for (b = 0; b < len; b++)
      if (bufs[i][b] != i + 1) {
        fail ("parity_buffers_alloc (%zu, %zu): buffer %zu byte %zu was "
              "overwritten", n, len, i, b);
        goto out;
      }
 out:
  parity_buffers_free (block);
}

static unsigned
check_alloc (void)
{
  static const size_t ns[] = { 1, 2, 17, MAX_DATA + 2 };
  static const size_t lens[] = { 512, 4096, 5000, 65536 };
  static const size_t skews[] = { 0, 16, 31 };
  unsigned a, l, aligned, s, n = 0;

  for (a = 0; a < sizeof ns / sizeof ns[0]; a++)
    for (l = 0; l < sizeof lens / sizeof lens[0]; l++)
      for (aligned = 0; aligned <= 1; aligned++)
        for (s = 0; s < sizeof skews / sizeof skews[0]; s++) {
          check_one_alloc (ns[a], lens[l], aligned, skews[s]);
          n++;
        }
  return n;
}

/* ---- recovery of lost blocks -------------------------------------- */

/* Lose blocks x and y (y == x for one) of a k+parity stripe whose P
 * and Q come from the naive reference; parity_recover must give back
 * every lost data block. */
static void
check_one_recovery (struct parity_code *c, unsigned k, unsigned parity,
                    size_t len, unsigned x, unsigned y,
                    uint8_t *const *orig, uint8_t *const *work)
{
  bool present[MAX_DATA + 2];
  unsigned b;

  for (b = 0; b < k + parity; b++) {
    present[b] = b != x && b != y;
    memcpy (work[b], present[b] ? orig[b] : orig[0], len);  /* garbage */
  }
  if (parity_recover (c, len, present, work) != 0) {
    fail ("recover k=%u parity=%u lost %u,%u: returned an error", k, parity,
          x, y);
    return;
  }
  for (b = 0; b < k; b++)
    if (memcmp (work[b], orig[b], len) != 0)
      fail ("recover k=%u parity=%u lost %u,%u: data block %u wrong", k,
            parity, x, y, b);
}

/* Buffers 64-byte aligned (ISA-L's xor_gen for one lost data block)
 * or 16 bytes off (ec_encode_data). */
static unsigned
check_recover_at (size_t misalign)
{
  void *mem[2 * (MAX_DATA + 2)];
  uint8_t *orig[MAX_DATA + 2], *work[MAX_DATA + 2];
  const size_t len = 4096;
  unsigned k, parity, x, y, b, n = 0;
  struct parity_code c;

  for (b = 0; b < 2 * (MAX_DATA + 2); b++)
    if (posix_memalign (&mem[b], 64, len + 64) != 0) {
      perror ("posix_memalign");
      exit (EXIT_FAILURE);
    }
  for (b = 0; b < MAX_DATA + 2; b++) {
    orig[b] = (uint8_t *) mem[2 * b] + misalign;
    work[b] = (uint8_t *) mem[2 * b + 1] + misalign;
  }
  for (parity = 1; parity <= 2; parity++)
    for (k = parity == 1 ? 1 : 2; k <= MAX_DATA; k++) {
      if (parity_init (&c, k, parity) != 0) {
        fail ("parity_init k=%u parity=%u", k, parity);
        continue;
      }
      for (b = 0; b < k; b++)
        fill_random (orig[b], len);
      reference_parity (k, len, orig, orig[k], work[0]);
      if (parity == 2)
        memcpy (orig[k + 1], work[0], len);
      /* Every single loss, and for RAID6 every pair: two data,
       * data+P, data+Q, P+Q. */
      for (x = 0; x < k + parity; x++)
        for (y = x; y < (parity == 2 ? k + parity : x + 1); y++) {
          check_one_recovery (&c, k, parity, len, x, y, orig, work);
          n++;
        }
      /* One too many is refused. */
      if (parity == 2 && k >= 3) {
        bool present[MAX_DATA + 2];
        for (b = 0; b < k + parity; b++)
          present[b] = b > 2;
        if (parity_recover (&c, len, present, work) != -1)
          fail ("recover k=%u: three lost data blocks were not refused", k);
      }
      parity_free (&c);
    }
  for (b = 0; b < 2 * (MAX_DATA + 2); b++)
    free (mem[b]);
  return n;
}

static unsigned
check_recover (void)
{
  return check_recover_at (0) + check_recover_at (16);
}

/* ---- locating a wrong block from the syndromes ------------------- */

/* Flip `flips` random bytes of buf (each by a nonzero value). */
static void
corrupt (uint8_t *buf, size_t len, unsigned flips)
{
  while (flips--)
    buf[rng () % len] ^= (uint8_t) (1 + rng () % 255);
}

/* k data blocks with their P and Q; the blocks listed in bad (data
 * index, k for P, k + 1 for Q) corrupted; parity_culprit must answer
 * want. */
static void
check_one_culprit (struct parity_code *c, unsigned k, const int *bad,
                   unsigned nbad, int want)
{
  const size_t len = 4096;
  uint8_t *block[MAX_DATA + 2], p2[4096], q2[4096];
  unsigned j;
  int got;

  for (j = 0; j < k + 2; j++) {
    block[j] = malloc (len);
    if (j < k)
      fill_random (block[j], len);
  }
  reference_parity (k, len, block, block[k], block[k + 1]);
  for (j = 0; j < nbad; j++)
    corrupt (block[bad[j]], len, 1 + (unsigned) (rng () % 40));
  reference_parity (k, len, block, p2, q2);
  got = parity_culprit (c, len, block[k], block[k + 1], p2, q2);
  if (got != want)
    fail ("parity_culprit: k=%u, %u bad blocks (the first %d): got %d, "
          "want %d", k, nbad, nbad ? bad[0] : -1, got, want);
  for (j = 0; j < k + 2; j++)
    free (block[j]);
}

static unsigned
check_culprit (void)
{
  static const unsigned ks[] = { 2, 3, 4, 7, 20 };
  struct parity_code c;
  unsigned n = 0, i;
  int t, u;

  for (i = 0; i < sizeof ks / sizeof ks[0]; i++) {
    unsigned k = ks[i];

    if (parity_init (&c, k, 2) == -1) {
      fail ("parity_init (%u, 2) failed", k);
      continue;
    }
    check_one_culprit (&c, k, NULL, 0, PARITY_AGREE);
    n++;
    for (t = 0; t < (int) k + 2; t++, n++)      /* each block alone */
      check_one_culprit (&c, k, &t, 1, t);
    for (t = 0; t < (int) k + 2; t++)           /* every pair */
      for (u = t + 1; u < (int) k + 2; u++, n++)
        check_one_culprit (&c, k, (int[]) { t, u }, 2, PARITY_UNLOCATED);
    parity_free (&c);
  }
  return n;
}

int
main (void)
{
  unsigned encodes, updates, allocs, recoveries, culprits;

  init_mul_tables ();
  encodes = check_encode ();
  updates = check_update ();
  allocs = check_alloc ();
  recoveries = check_recover ();
  culprits = check_culprit ();
  if (failures) {
    printf ("test-parity: %u failures\n", failures);
    return EXIT_FAILURE;
  }
  printf ("test-parity: %u encodes (P and P+Q, k=1..20, 40 bytes to 64K, "
          "buffers aligned, or misaligned by 1/16/48 alike or each its "
          "own way) and %u read-modify-write "
          "updates match "
          "naive GF(2^8); %u buffer sets are disjoint, staggered and skewed; "
          "%u loss patterns (every single and double loss, k=1..20) "
          "recover; the syndromes name each one wrong block and no "
          "pair of them (%u cases)\n", encodes, updates, allocs,
          recoveries, culprits);
  return EXIT_SUCCESS;
}
