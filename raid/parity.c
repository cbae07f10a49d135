/* nbdraid: parity arithmetic, all of it through ISA-L. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/erasure_code.h>

#include "parity.h"

int
parity_init (struct parity_code *c, unsigned data, unsigned parity)
{
  unsigned rows = data + parity;
  unsigned char *matrix;

  c->data = data;
  c->parity = parity;
  c->tables = malloc (32 * (size_t) data * parity);
  matrix = malloc ((size_t) rows * data);
  if (!c->tables || !matrix) {
    free (c->tables);
    free (matrix);
    errno = ENOMEM;
    return -1;
  }
  /* Rows data.. of the RS matrix are all ones (P) and 2^j (Q): exactly
   * RAID6 (isal.md). */
  gf_gen_rs_matrix (matrix, (int) rows, (int) data);
  ec_init_tables ((int) data, (int) parity, matrix + (size_t) data * data,
                  c->tables);
  free (matrix);
  return 0;
}

void
parity_free (struct parity_code *c)
{
  free (c->tables);
  c->tables = NULL;
}

void
parity_encode (const struct parity_code *c, size_t len,
               uint8_t *const *data, uint8_t *const *parity)
{
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

uint8_t *
parity_buffers_alloc (size_t n, size_t len, bool page_aligned, uint8_t **bufs)
{
  const size_t page = 4096, stagger = page_aligned ? 0 : 256;
  size_t stride = (len + page - 1) / page * page + stagger;
  void *block;
  size_t i;

  /* stride is a whole number of pages plus the stagger, so buffer i
   * starts i*stagger bytes into its page (mod 4096). */
  if (posix_memalign (&block, page, n * stride) != 0) {
    errno = ENOMEM;
    return NULL;
  }
  for (i = 0; i < n; i++)
    bufs[i] = (uint8_t *) block + i * stride;
  return block;
}

void
parity_buffers_free (uint8_t *block)
{
  free (block);
}
