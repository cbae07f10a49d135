/* nbdraid: the engine's verbs on an assembled array. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "superblock-io.h"

void
array_log (const struct raid_array *a, enum raid_log_level level,
           const char *fmt, ...)
{
  char msg[512];
  va_list ap;

  if (!a->log)
    return;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  a->log (a->log_opaque, level, msg);
}

static void
exec_op (void *ctx, struct io_op *op)
{
  struct raid_array *a = ctx;
  struct raid_slot *s = &a->slots[op->member];
  struct member *m = s->io;
  uint64_t off = s->data_offset_bytes + op->off;
  int r = -1;

  switch (op->kind) {
  case IO_READ:
    r = m->ops->pread (m, op->buf, op->len, off);
    break;
  case IO_WRITE:
    r = m->ops->pwrite (m, op->buf, op->len, off);
    break;
  case IO_ZERO:
    r = m->ops->zero (m, op->len, off);
    break;
  case IO_FLUSH:
    r = m->ops->flush (m);
    break;
  }
  op->err = r == 0 ? 0 : errno;
}

int
array_run (struct raid_array *a, struct io_batch *b)
{
  int first_err = 0;
  size_t i;

  iopool_run (a->pool, b->ops, b->n, exec_op, a);
  for (i = 0; i < b->n; i++) {
    const struct io_op *op = &b->ops[i];
    if (op->err == 0)
      continue;
    array_log (a, RAID_LOG_ERROR, "array %s: member %u (%s): %s at %" PRIu64
               ": %s", a->name, op->member, a->slots[op->member].io->name,
               io_kind_name (op->kind),
               a->slots[op->member].data_offset_bytes + op->off,
               strerror (op->err));
    if (!first_err)
      first_err = op->err;
  }
  if (first_err) {
    errno = first_err;
    return -1;
  }
  return 0;
}

void
array_lock_units (struct raid_array *a, uint64_t first, uint64_t last,
                  bool exclusive)
{
  stripe_lock (&a->locks, a->ops->lock_key (a, first),
               a->ops->lock_key (a, last), exclusive);
}

void
array_unlock_units (struct raid_array *a, uint64_t first, uint64_t last)
{
  stripe_unlock (&a->locks, a->ops->lock_key (a, first),
                 a->ops->lock_key (a, last));
}

int
raid_start (struct raid_array *a)
{
  return iopool_start (a->pool);
}

const struct raid_geometry *
raid_geometry (const struct raid_array *a)
{
  return &a->geo;
}

uint64_t
raid_size (const struct raid_array *a)
{
  return a->geo.array_bytes;
}

bool
raid_clean (const struct raid_array *a)
{
  return a->slots[0].sb.resync_offset_sectors == MD_RESYNC_CLEAN;
}

uint64_t
raid_stripe_bytes (const struct raid_array *a)
{
  return a->geo.unit_bytes * a->geo.data_members;
}

/* Requests must lie inside the array; nbdkit checks this too, the
 * engine does not rely on it. */
static int
check_range (const struct raid_array *a, uint64_t count, uint64_t offset)
{
  if (count == 0 || offset >= a->geo.array_bytes ||
      count > a->geo.array_bytes - offset) {
    errno = count == 0 ? EINVAL : ENOSPC;
    return -1;
  }
  return 0;
}

static int
check_writable (const struct raid_array *a)
{
  if (a->readonly) {
    errno = EROFS;
    return -1;
  }
  return 0;
}

int
raid_read (struct raid_array *a, void *buf, uint64_t count, uint64_t offset)
{
  if (check_range (a, count, offset))
    return -1;
  return a->ops->read (a, buf, count, offset);
}

int
raid_write (struct raid_array *a, const void *buf, uint64_t count,
            uint64_t offset, bool fua)
{
  if (check_writable (a) || check_range (a, count, offset) ||
      a->ops->write (a, buf, count, offset))
    return -1;
  return fua ? raid_flush (a) : 0;
}

int
raid_zero (struct raid_array *a, uint64_t count, uint64_t offset, bool fua)
{
  if (check_writable (a) || check_range (a, count, offset) ||
      a->ops->write (a, NULL, count, offset))
    return -1;
  return fua ? raid_flush (a) : 0;
}

int
raid_flush (struct raid_array *a)
{
  struct io_batch b;
  unsigned i;
  int r = 0;

  io_batch_init (&b);
  for (i = 0; i < a->geo.members && r == 0; i++)
    r = io_batch_add (&b, IO_FLUSH, i, 0, 0, NULL);
  if (r == 0)
    r = array_run (a, &b);
  io_batch_free (&b);
  return r;
}

/* At most this many units are examined per call; the client asks again
 * for the rest. */
#define EXTENT_UNITS_PER_CALL 4096

int
raid_extents (struct raid_array *a, uint64_t count, uint64_t offset,
              raid_extent_fn fn, void *opaque)
{
  const uint64_t U = a->geo.unit_bytes;
  uint64_t run_start = offset, run_len = 0, units = 0;
  bool run_hole = false;

  if (check_range (a, count, offset))
    return -1;
  while (count > 0 && units++ < EXTENT_UNITS_PER_CALL) {
    uint64_t within = offset % U, len = U - within, moff;
    struct member *m;
    unsigned member;
    int hole;

    if (len > count)
      len = count;
    a->ops->locate (a, offset / U, &member, &moff);
    m = a->slots[member].io;
    hole = m->ops->is_hole (m, len,
                            a->slots[member].data_offset_bytes + moff + within);
    if (hole == -1) {
      array_log (a, RAID_LOG_ERROR, "array %s: member %u (%s): seek: %s",
                 a->name, member, m->name, strerror (errno));
      return -1;
    }
    if (run_len > 0 && (bool) hole != run_hole) {
      if (fn (opaque, run_start, run_len, run_hole) == -1)
        return -1;
      run_start = offset;
      run_len = 0;
    }
    run_hole = hole;
    run_len += len;
    offset += len;
    count -= len;
  }
  return fn (opaque, run_start, run_len, run_hole);
}

uint64_t
raid_sync_units (const struct raid_array *a)
{
  return a->ops->sync_units (a);
}

int
raid_sync (struct raid_array *a, uint64_t first, uint64_t n)
{
  if (check_writable (a))
    return -1;
  return a->ops->sync (a, first, n);
}

static int
write_superblock (struct raid_array *a, struct raid_slot *s, bool clean)
{
  s->sb.events++;
  s->sb.utime = md_time_now ();
  s->sb.resync_offset_sectors = clean ? MD_RESYNC_CLEAN : 0;
  if (md_sb_write (s->io, &s->sb) == 0)
    return 0;
  array_log (a, RAID_LOG_ERROR, "array %s: %s: superblock write: %s",
             a->name, s->io->name, strerror (errno));
  return -1;
}

int
raid_update_superblocks (struct raid_array *a, bool clean)
{
  unsigned i;

  if (check_writable (a))
    return -1;
  for (i = 0; i < a->geo.members; i++)
    if (write_superblock (a, &a->slots[i], clean))
      return -1;
  for (i = 0; i < a->nspares; i++)
    if (write_superblock (a, &a->spares[i], clean) ||
        a->spares[i].io->ops->flush (a->spares[i].io))
      return -1;
  return raid_flush (a);
}
