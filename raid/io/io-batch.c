/* nbdraid: building batches of member operations. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "io-batch.h"

/* An empty batch; its ops array is allocated on the first add. */
void
io_batch_init (struct io_batch *b)
{
  b->ops = NULL;
  b->n = b->cap = 0;
  io_batch_reset (b);
}

/* Empty the batch for another plan, keeping its memory. */
void
io_batch_reset (struct io_batch *b)
{
  size_t i;

  b->n = 0;
  for (i = 0; i < 2 * RAID_MAX_MEMBERS; i++)
    b->last[i] = IO_NONE;
}

/* Free the batch's ops. */
void
io_batch_free (struct io_batch *b)
{
  free (b->ops);
  b->ops = NULL;
  b->n = b->cap = 0;
}

/* Does (off, len, buf) continue op so that one member call can do both? */
static bool
continues (const struct io_op *op, enum io_kind kind, uint64_t off,
           void *buf)
{
  if (op->kind != kind)
    return false;
  switch (kind) {
  case IO_FLUSH:
    return true;
  case IO_ZERO:
    return op->off + op->len == off;
  default:
    return op->off + op->len == off && (char *) op->buf + op->len == buf;
  }
}

int
io_batch_add (struct io_batch *b, enum io_kind kind, unsigned member,
              uint64_t off, uint64_t len, void *buf)
{
  size_t last = b->last[member];

  if (last != IO_NONE && continues (&b->ops[last], kind, off, buf)) {
    if (kind != IO_FLUSH)
      b->ops[last].len += len;
    return 0;
  }
  if (b->n == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 16;
    struct io_op *ops = realloc (b->ops, cap * sizeof *ops);
    if (!ops) {
      errno = ENOMEM;
      return -1;
    }
    b->ops = ops;
    b->cap = cap;
  }
  b->ops[b->n] = (struct io_op) {
    .kind = kind, .member = member, .off = off, .len = len, .buf = buf,
  };
  b->last[member] = b->n++;
  return 0;
}

int
io_batch_add_metadata (struct io_batch *b, unsigned member, uint64_t off,
                       uint64_t len, void *buf)
{
  /* It never merges with data, in either direction. */
  b->last[member] = IO_NONE;
  if (io_batch_add (b, IO_WRITE, member, off, len, buf))
    return -1;
  b->ops[b->n - 1].metadata = true;
  b->last[member] = IO_NONE;
  return 0;
}

/* An op kind's name for messages: the member call it makes. */
const char *
io_kind_name (enum io_kind kind)
{
  static const char *const names[] = {
    [IO_READ] = "pread", [IO_WRITE] = "pwrite", [IO_ZERO] = "zero",
    [IO_FLUSH] = "flush",
  };
  return names[kind];
}
