/* nbdraid: parity arithmetic, all of it through ISA-L. */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>

#include "parity.h"

/* Slots of the decode cache: missing data blocks m1 < m2 (m2 == k when
 * only one is missing) and whether Q stands in for an absent P. */
static size_t
decode_slots (const struct parity_code *c)
{
  return (size_t) c->data * (c->data + 1) * 2;
}

/* ISA-L's xor_gen and pq_gen give what ec_encode_data gives with the
 * P and Q rows, several times faster (client-tests/bench/FINDINGS.md),
 * but only for two data blocks or more, len a multiple of 32 and
 * 32-byte aligned buffers.  Client data sits where nbdkit's buffer put
 * it, 16 bytes past a 64-byte boundary, so buffers that are all
 * misaligned alike qualify too, from their first aligned byte: *head
 * bytes in, for *mid bytes (the edges, under 32 bytes each, take the
 * general route).  Put the buffers of lists[0..n-1] so advanced in one
 * array, or return false and let the whole call take the general
 * route. */
static bool
raid_gen_args (size_t len, unsigned n, uint8_t *const *const *lists,
               const unsigned *counts, void **array, size_t *head,
               size_t *mid)
{
  uintptr_t skew = (uintptr_t) lists[0][0] % 32;
  unsigned l, i, v = 0;

  *head = (32 - skew) % 32;
  if (len < *head + 32 || len > INT32_MAX)
    return false;
  *mid = (len - *head) / 32 * 32;
  for (l = 0; l < n; l++)
    for (i = 0; i < counts[l]; i++) {
      if ((uintptr_t) lists[l][i] % 32 != skew)
        return false;
      array[v++] = lists[l][i] + *head;
    }
  return true;
}

/* ec_encode_data over bytes [off, off+len) of every buffer. */
static void
encode_range (size_t off, size_t len, unsigned k, unsigned rows,
              unsigned char *tables, uint8_t *const *src,
              uint8_t *const *dst)
{
  unsigned char *s[256], *d[2];
  unsigned i;

  if (len == 0)
    return;
  for (i = 0; i < k; i++)
    s[i] = src[i] + off;
  for (i = 0; i < rows; i++)
    d[i] = dst[i] + off;
  ec_encode_data ((int) len, (int) k, (int) rows, tables, s, d);
}

/* ec_encode_data over the edges raid_gen_args left out. */
static void
encode_edges (size_t len, size_t head, size_t mid, unsigned k,
              unsigned rows, unsigned char *tables, uint8_t *const *src,
              uint8_t *const *dst)
{
  encode_range (0, head, k, rows, tables, src, dst);
  encode_range (head + mid, len - head - mid, k, rows, tables, src, dst);
}

/* pq_gen and xor_gen store with non-temporal writes and no fence: make
 * them visible before another thread (a member's I/O) reads them. */
static void
fence (void)
{
  __atomic_thread_fence (__ATOMIC_SEQ_CST);
}

/* Set up c for `data` data blocks and `parity` parity blocks (P, or P
 * and Q): its matrix and encode tables.  0, or -1 (ENOMEM). */
int
parity_init (struct parity_code *c, unsigned data, unsigned parity)
{
  unsigned rows = data + parity;

  memset (c, 0, sizeof *c);
  c->data = data;
  c->parity = parity;
  c->tables = malloc (32 * (size_t) data * parity);
  c->matrix = malloc ((size_t) rows * data);
  c->decode = calloc (decode_slots (c), sizeof *c->decode);
  if (!c->tables || !c->matrix || !c->decode) {
    parity_free (c);
    errno = ENOMEM;
    return -1;
  }
  pthread_mutex_init (&c->decode_lock, NULL);
  /* Rows data.. of the RS matrix are all ones (P) and 2^j (Q): exactly
   * RAID6 (ISA-L's gf_gen_rs_matrix: the identity, then 1s, then 2^j). */
  gf_gen_rs_matrix (c->matrix, (int) rows, (int) data);
  ec_init_tables ((int) data, (int) parity, c->matrix + (size_t) data * data,
                  c->tables);
  if (parity == 2)
    parity_locate_init (c);
  return 0;
}

/* Free the code's tables, the decode tables built on demand too. */
void
parity_free (struct parity_code *c)
{
  size_t i;

  if (c->decode) {
    for (i = 0; i < decode_slots (c); i++)
      free (c->decode[i]);
    pthread_mutex_destroy (&c->decode_lock);
  }
  free (c->decode);
  free (c->matrix);
  free (c->tables);
  memset (c, 0, sizeof *c);
}

/* The k generator rows of the blocks a recovery reads: the present data
 * blocks in order, then P and/or Q for the missing ones. */
static unsigned
survivor_rows (const struct parity_code *c, const bool *present,
               unsigned nmissing, unsigned *rows)
{
  unsigned b, n = 0, used = 0;

  for (b = 0; b < c->data; b++)
    if (present[b])
      rows[n++] = b;
  for (b = c->data; b < c->data + c->parity && used < nmissing; b++)
    if (present[b]) {
      rows[n++] = b;
      used++;
    }
  return used == nmissing ? n : 0;
}

/* Decode tables for one failure pattern: invert the survivors' rows of
 * the generator matrix and keep the rows that yield the missing blocks. */
static unsigned char *
build_decode (const struct parity_code *c, const unsigned *rows,
              const unsigned *missing, unsigned nmissing)
{
  size_t k = c->data;
  unsigned char *b = malloc (k * k), *inv = malloc (k * k);
  unsigned char *want = malloc (nmissing * k);
  unsigned char *tables = malloc (32 * k * nmissing);
  unsigned i;

  if (!b || !inv || !want || !tables)
    goto fail;
  for (i = 0; i < k; i++)
    memcpy (b + i * k, c->matrix + rows[i] * k, k);
  if (gf_invert_matrix (b, inv, (int) k) != 0)
    goto fail;                  /* cannot happen for RAID6's matrix */
  for (i = 0; i < nmissing; i++)
    memcpy (want + i * k, inv + missing[i] * k, k);
  ec_init_tables ((int) k, (int) nmissing, want, tables);
  free (b);
  free (inv);
  free (want);
  return tables;
 fail:
  free (b);
  free (inv);
  free (want);
  free (tables);
  return NULL;
}

int
parity_recover (struct parity_code *c, size_t len, const bool *present,
                uint8_t *const *blocks)
{
  unsigned missing[2], nmissing = 0, rows[256], b;
  uint8_t *src[256], *dst[2];
  unsigned char *tables;
  size_t slot;

  for (b = 0; b < c->data; b++)
    if (!present[b]) {
      if (nmissing == c->parity) {
        errno = EIO;
        return -1;
      }
      missing[nmissing++] = b;
    }
  if (nmissing == 0)
    return 0;
  if (survivor_rows (c, present, nmissing, rows) != c->data) {
    errno = EIO;
    return -1;
  }
  slot = ((size_t) missing[0] * (c->data + 1) +
          (nmissing == 2 ? missing[1] : c->data)) * 2 +
    (nmissing == 1 && !present[c->data]);
  tables = __atomic_load_n (&c->decode[slot], __ATOMIC_ACQUIRE);
  if (!tables) {
    pthread_mutex_lock (&c->decode_lock);
    tables = c->decode[slot];
    if (!tables) {
      tables = build_decode (c, rows, missing, nmissing);
      __atomic_store_n (&c->decode[slot], tables, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock (&c->decode_lock);
    if (!tables) {
      errno = ENOMEM;
      return -1;
    }
  }
  for (b = 0; b < c->data; b++)
    src[b] = blocks[rows[b]];
  for (b = 0; b < nmissing; b++)
    dst[b] = blocks[missing[b]];
  /* One data block from P is the XOR of the others. */
  if (nmissing == 1 && rows[c->data - 1] == c->data && c->data >= 2) {
    uint8_t *const *lists[] = { src, dst };
    const unsigned counts[] = { c->data, 1 };
    void *array[256 + 1];
    size_t head, mid;

    if (raid_gen_args (len, 2, lists, counts, array, &head, &mid) &&
        xor_gen ((int) c->data + 1, (int) mid, array) == 0) {
      fence ();
      encode_edges (len, head, mid, c->data, 1, tables, src, dst);
      return 0;
    }
  }
  ec_encode_data ((int) len, (int) c->data, (int) nmissing, tables, src, dst);
  return 0;
}

void
parity_encode (const struct parity_code *c, size_t len,
               uint8_t *const *data, uint8_t *const *parity)
{
  uint8_t *const *lists[] = { data, parity };
  const unsigned counts[] = { c->data, c->parity };
  void *array[256 + 2];
  size_t head, mid;

  if (c->data >= 2 &&
      raid_gen_args (len, 2, lists, counts, array, &head, &mid) &&
      (c->parity == 1 ? xor_gen ((int) c->data + 1, (int) mid, array)
       : pq_gen ((int) c->data + 2, (int) mid, array)) == 0) {
    fence ();
    encode_edges (len, head, mid, c->data, c->parity, c->tables, data,
                  parity);
    return;
  }
  ec_encode_data ((int) len, (int) c->data, (int) c->parity, c->tables,
                  (unsigned char **) data, (unsigned char **) parity);
}

void
parity_update (const struct parity_code *c, size_t len, unsigned coef,
               const uint8_t *data, uint8_t *const *parity)
{
  ec_encode_data_update ((int) len, (int) c->data, (int) c->parity,
                         (int) coef, c->tables, (unsigned char *) data,
                         (unsigned char **) parity);
}

size_t
parity_buffers_bytes (size_t n, size_t len, bool page_aligned)
{
  const size_t page = 4096, stagger = page_aligned ? 0 : 256;

  return n * ((len + page - 1) / page * page + stagger);
}

void
parity_buffers_carve (uint8_t *mem, size_t n, size_t len, bool page_aligned,
                      size_t skew, uint8_t **bufs)
{
  size_t stride = parity_buffers_bytes (1, len, page_aligned), i;

  /* stride is a whole number of pages plus the stagger, so buffer i
   * starts i*stagger bytes into its page (mod 4096); the skew fits in
   * the stagger's bytes. */
  skew = page_aligned ? 0 : skew % 32;
  for (i = 0; i < n; i++)
    bufs[i] = mem + i * stride + skew;
}

/* Blocks of parity buffers of a quarter MiB and more (a stripe update
 * at large chunks, a resync's stripe) come from mmap and go back to a
 * small cache shared by every thread.  From malloc, each of nbdkit's
 * threads kept its own arena of freed blocks as large as the largest
 * update it had run, which took the server's RSS past 300 MiB, and
 * arenas that shrank and grew again refaulted their pages (12000
 * faults in a resync of 1 GiB members, 768K stripes); fresh mmap'd
 * pages for every update cost a fault and a zeroing per page, a third
 * of the write speed. */
#define BIG_BLOCK (256 * 1024)
#define CACHE_BYTES (48 * 1024 * 1024)

/* Each block starts with this header page; the buffers follow it. */
struct block_head {
  size_t bytes;                 /* the whole block */
  struct block_head *next;      /* in the cache */
};
#define HEAD_BYTES 4096

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct block_head *cache;
static size_t cache_bytes;

/* The smallest cached block that holds bytes without wasting half of
 * itself, taken out of the cache; NULL if none. */
static struct block_head *
cache_take (size_t bytes)
{
  struct block_head **p, **best = NULL;

  pthread_mutex_lock (&cache_lock);
  for (p = &cache; *p; p = &(*p)->next)
    if ((*p)->bytes >= bytes && (*p)->bytes <= 2 * bytes &&
        (!best || (*p)->bytes < (*best)->bytes))
      best = p;
  if (best) {
    struct block_head *h = *best;
    *best = h->next;
    cache_bytes -= h->bytes;
    pthread_mutex_unlock (&cache_lock);
    return h;
  }
  pthread_mutex_unlock (&cache_lock);
  return NULL;
}

/* A page-aligned block of at least `bytes`: a big one rounded up to
 * BIG_BLOCK, from the cache or mmap; a small one from posix_memalign. */
static struct block_head *
block_alloc (size_t bytes)
{
  struct block_head *h;
  void *mem;

  if (bytes >= BIG_BLOCK) {
    bytes = (bytes + BIG_BLOCK - 1) / BIG_BLOCK * BIG_BLOCK;
    if ((h = cache_take (bytes)))
      return h;
    mem = mmap (NULL, bytes, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
      return NULL;
  }
  else if (posix_memalign (&mem, 4096, bytes) != 0)
    return NULL;
  h = mem;
  h->bytes = bytes;
  return h;
}

uint8_t *
parity_buffers_alloc (size_t n, size_t len, bool page_aligned, size_t skew,
                      uint8_t **bufs)
{
  struct block_head *h =
    block_alloc (HEAD_BYTES + parity_buffers_bytes (n, len, page_aligned));

  if (!h) {
    errno = ENOMEM;
    return NULL;
  }
  parity_buffers_carve ((uint8_t *) h + HEAD_BYTES, n, len, page_aligned,
                        skew, bufs);
  return (uint8_t *) h;
}

/* Give back a block from parity_buffers_alloc: a big one to the cache
 * while it has room, else to the system.  NULL is ignored. */
void
parity_buffers_free (uint8_t *block)
{
  struct block_head *h = (struct block_head *) block;

  if (!h)
    return;
  if (h->bytes < BIG_BLOCK) {
    free (h);
    return;
  }
  pthread_mutex_lock (&cache_lock);
  if (cache_bytes + h->bytes <= CACHE_BYTES) {
    h->next = cache;
    cache = h;
    cache_bytes += h->bytes;
    h = NULL;
  }
  pthread_mutex_unlock (&cache_lock);
  if (h)
    munmap (h, h->bytes);
}
