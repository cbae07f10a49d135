/* nbdraid: a list of member operations that run together.
 *
 * Levels add the reads or writes one request needs; adjacent operations
 * on one member merge into one, then the whole batch is issued in
 * parallel and each op carries its own result.
 */
#ifndef NBDRAID_IO_BATCH_H
#define NBDRAID_IO_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "geometry.h"

enum io_kind { IO_READ, IO_WRITE, IO_ZERO, IO_FLUSH };

struct io_op {
  enum io_kind kind;
  unsigned member;              /* role, or members + spare index */
  uint64_t off;                 /* byte offset in the member's data area */
  uint64_t len;
  void *buf;                    /* IO_READ / IO_WRITE */
  bool metadata;                /* off is from the member's start */
  int err;                      /* 0, or the errno it failed with */
};

#define IO_NONE SIZE_MAX

struct io_batch {
  struct io_op *ops;
  size_t n, cap;
  /* each member's latest op, or IO_NONE (roles, then spares) */
  size_t last[2 * RAID_MAX_MEMBERS];
};

void io_batch_init (struct io_batch *b);
void io_batch_reset (struct io_batch *b);
void io_batch_free (struct io_batch *b);

/* Append an operation, merging with the member's previous one when it
 * continues it.  Returns 0 or -1 (ENOMEM). */
int io_batch_add (struct io_batch *b, enum io_kind kind, unsigned member,
                  uint64_t off, uint64_t len, void *buf);

/* A write of metadata (the bitmap) at an offset from the member's
 * start, outside its data area. */
int io_batch_add_metadata (struct io_batch *b, unsigned member, uint64_t off,
                           uint64_t len, void *buf);

const char *io_kind_name (enum io_kind kind);

#endif
