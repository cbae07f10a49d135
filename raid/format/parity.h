/* nbdraid: P and P+Q parity with ISA-L.
 *
 * Data buffers are passed in Q-coefficient order (md's syndrome order,
 * see geometry_stripe_map): buffer k is multiplied by 2^k in Q.
 * ISA-L's ec_encode_data family accepts any buffer alignment.
 */
#ifndef NBDRAID_PARITY_H
#define NBDRAID_PARITY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct parity_code {
  unsigned data;                /* k data blocks */
  unsigned parity;              /* 1 (P) or 2 (P, Q) */
  unsigned char *matrix;        /* (k+parity) x k: identity, P row, Q row */
  unsigned char *tables;        /* ec_init_tables() of the P/Q rows */
  /* Decode tables per failure pattern, built on first use. */
  pthread_mutex_t decode_lock;
  unsigned char **decode;
  /* RAID6: the exponent j of each nonzero x = 2^j (parity-locate.c). */
  uint8_t log2[256];
};

int parity_init (struct parity_code *c, unsigned data, unsigned parity);
void parity_free (struct parity_code *c);

/* parity[0] = P, parity[1] = Q of data[0..k-1]. */
void parity_encode (const struct parity_code *c, size_t len,
                    uint8_t *const *data, uint8_t *const *parity);

/* Fold one data block into existing parity: P ^= D, Q ^= 2^coef * D.
 * Applying it with the old and then the new contents of a block turns
 * the old parity into the new (read-modify-write). */
void parity_update (const struct parity_code *c, size_t len, unsigned coef,
                    const uint8_t *data, uint8_t *const *parity);

/* Blocks of a stripe column are numbered 0..k-1 for data (in
 * Q-coefficient order), k for P and k+1 for Q.  Given the present ones,
 * compute every missing data block into its buffer (parity is not
 * recomputed: encode again for that).  Returns 0, or -1 (EIO) when more
 * blocks are missing than the parity can restore. */
int parity_recover (struct parity_code *c, size_t len, const bool *present,
                    uint8_t *const *blocks);

/* parity_culprit's answers besides a block number. */
#define PARITY_AGREE (-1)       /* stored and computed parity agree */
#define PARITY_UNLOCATED (-2)   /* no one block explains the difference */

/* RAID6: which one block of a stripe column is wrong, given its stored
 * P and Q (p, q) and those computed from its data (p2, q2), over len
 * bytes: a data block's number (Q order), data for P, data + 1 for Q;
 * or PARITY_AGREE, or PARITY_UNLOCATED (parity-locate.c). */
int parity_culprit (const struct parity_code *c, size_t len,
                    const uint8_t *p, const uint8_t *q, const uint8_t *p2,
                    const uint8_t *q2);
/* Set up c->log2 (parity_init does, for P+Q). */
void parity_locate_init (struct parity_code *c);

/* Allocate n buffers of len bytes in one block, staggered by 256 bytes
 * within a page (ISA-L runs several times slower when every buffer
 * starts at the same page offset: client-tests/bench/FINDINGS.md) and
 * then skew (under 32) bytes further, to share the misalignment of
 * client data they are computed with; or
 * page-aligned for O_DIRECT members, whatever skew.  Returns the block
 * to pass to parity_buffers_free, or NULL. */
uint8_t *parity_buffers_alloc (size_t n, size_t len, bool page_aligned,
                               size_t skew, uint8_t **bufs);
void parity_buffers_free (uint8_t *block);
/* The same buffers in memory of the caller's: the bytes they take, and
 * cutting them out of page-aligned mem. */
size_t parity_buffers_bytes (size_t n, size_t len, bool page_aligned);
void parity_buffers_carve (uint8_t *mem, size_t n, size_t len,
                           bool page_aligned, size_t skew, uint8_t **bufs);

#endif
