/* nbdraid: joining member-contiguous operations of a batch. */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io-gather.h"

/* Bounce buffers aligned for O_DIRECT members. */
#define BOUNCE_ALIGN 4096

/* Does op continue run, so that one call can do both? */
static bool
continues (const struct io_op *run, const struct io_op *op)
{
  return run->kind == op->kind && (op->kind == IO_READ || op->kind == IO_WRITE)
         && !run->metadata && !op->metadata && run->off + run->len == op->off
         && run->len + op->len <= GATHER_MAX_BYTES;
}

/* Is run r of more than one op (and so over a bounce buffer)? */
static bool
joined (const struct io_gather *g, size_t r)
{
  return g->first[r] != g->last[r];
}

static void
free_plan (struct io_gather *g)
{
  free (g->ops);
  free (g->first);
  free (g->last);
  free (g->next);
}

/* Give joined runs their buffers, with a write's bytes in order.
 * Returns 0 or -1 (ENOMEM), freeing those it gave. */
static int
bounce (struct io_gather *g, const struct io_batch *b)
{
  size_t r, i;
  uint8_t *p;

  for (r = 0; r < g->n; r++) {
    void *buf;

    if (!joined (g, r))
      continue;
    if (posix_memalign (&buf, BOUNCE_ALIGN, g->ops[r].len) != 0) {
      while (r-- > 0)
        if (joined (g, r))
          free (g->ops[r].buf);
      errno = ENOMEM;
      return -1;
    }
    g->ops[r].buf = buf;
    if (g->ops[r].kind != IO_WRITE)
      continue;
    for (p = buf, i = g->first[r]; i != IO_NONE; i = g->next[i]) {
      memcpy (p, b->ops[i].buf, b->ops[i].len);
      p += b->ops[i].len;
    }
  }
  return 0;
}

int
io_gather_plan (struct io_gather *g, const struct io_batch *b,
                bool (*joinable) (void *ctx, unsigned member), void *ctx)
{
  size_t latest[2 * RAID_MAX_MEMBERS], i, r;

  g->n = 0;
  g->ops = malloc (b->n * sizeof *g->ops);
  g->first = malloc (b->n * sizeof *g->first);
  g->last = malloc (b->n * sizeof *g->last);
  g->next = malloc (b->n * sizeof *g->next);
  if (!g->ops || !g->first || !g->last || !g->next)
    goto nomem;
  for (i = 0; i < 2 * RAID_MAX_MEMBERS; i++)
    latest[i] = IO_NONE;
  for (i = 0; i < b->n; i++) {
    const struct io_op *op = &b->ops[i];

    g->next[i] = IO_NONE;
    r = latest[op->member];
    if (r != IO_NONE && continues (&g->ops[r], op)
        && joinable (ctx, op->member)) {
      g->ops[r].len += op->len;
      g->next[g->last[r]] = i;
      g->last[r] = i;
      continue;
    }
    r = g->n++;
    g->ops[r] = *op;
    g->first[r] = g->last[r] = i;
    latest[op->member] = r;
  }
  if (bounce (g, b) == 0)
    return 0;
nomem:
  free_plan (g);
  errno = ENOMEM;
  return -1;
}

void
io_gather_done (struct io_gather *g, struct io_batch *b)
{
  size_t r, i;

  for (r = 0; r < g->n; r++) {
    const uint8_t *p = g->ops[r].buf;

    for (i = g->first[r]; i != IO_NONE; i = g->next[i])
      b->ops[i].err = g->ops[r].err;
    if (!joined (g, r))
      continue;
    for (i = g->first[r]; i != IO_NONE; i = g->next[i]) {
      if (g->ops[r].kind == IO_READ && g->ops[r].err == 0)
        memcpy (b->ops[i].buf, p, b->ops[i].len);
      p += b->ops[i].len;
    }
    free (g->ops[r].buf);
  }
  free_plan (g);
}
