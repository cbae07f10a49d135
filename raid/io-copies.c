/* nbdraid: reads and writes for the copies family (RAID0, RAID1, RAID10).
 *
 * Every array unit lives in one or more places; a write goes to all of
 * them, a read to the least busy one.  No parity, so zeroing is a
 * member zero (hole punch) on every copy.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

static uint64_t
copies_lock_key (const struct raid_array *a, uint64_t unit)
{
  return unit;
}

/* The least loaded copy not in gone; ties rotate with the unit so single
 * small reads spread over the copies too.  NULL if every copy is gone. */
static const struct place *
pick_copy (const struct place *places, unsigned n, uint64_t unit,
           const unsigned *load, const struct member_set *gone)
{
  const struct place *best = NULL;
  unsigned i;

  for (i = 0; i < n; i++) {
    const struct place *p = &places[(unit + i) % n];
    if (!member_set_has (gone, p->disk) &&
        (!best || load[p->disk] < load[best->disk]))
      best = p;
  }
  return best;
}

/* Plan reads of [offset, offset+count) from copies outside gone. */
static int
plan_reads (struct raid_array *a, uint8_t *buf, uint64_t count,
            uint64_t offset, const struct member_set *gone,
            struct io_batch *b)
{
  const struct raid_geometry *g = &a->geo;
  struct place places[RAID_MAX_MEMBERS];
  unsigned load[RAID_MAX_MEMBERS] = { 0 };

  while (count > 0) {
    uint64_t unit = offset / g->unit_bytes, within = offset % g->unit_bytes;
    uint64_t len = g->unit_bytes - within;
    unsigned n = geometry_unit_places (g, unit, places);
    const struct place *p = pick_copy (places, n, unit, load, gone);

    if (!p) {
      array_log (a, RAID_LOG_ERROR, "array %s: no readable copy left of "
                 "array offset %" PRIu64, a->name, offset);
      errno = EIO;
      return -1;
    }
    if (len > count)
      len = count;
    load[p->disk]++;
    if (io_batch_add (b, IO_READ, p->disk,
                      p->member_unit * g->unit_bytes + within, len, buf))
      return -1;
    buf += len;
    offset += len;
    count -= len;
  }
  return 0;
}

/* Read from the least busy copies; where a read fails, read the other
 * copies instead and then rewrite the failed range from what they said
 * (md's read-error repair). */
static int
copies_read (struct raid_array *a, uint8_t *buf, uint64_t count,
             uint64_t offset)
{
  uint64_t first = offset / a->geo.unit_bytes;
  uint64_t last = (offset + count - 1) / a->geo.unit_bytes;
  struct member_set gone, repair = { { 0 } };
  struct io_batch b, fix;
  size_t i;
  int r = -1;

  io_batch_init (&b);
  io_batch_init (&fix);
  array_lock_units (a, first, last, false);
  array_unavailable (a, &gone);
  for (;;) {
    io_batch_reset (&b);
    if (plan_reads (a, buf, count, offset, &gone, &b))
      goto out;
    if (array_run (a, &b) == 0)
      break;
    for (i = 0; i < b.n; i++)
      if (b.ops[i].err) {
        array_read_failed (a, &b.ops[i], &gone, &repair);
        if (member_set_has (&repair, b.ops[i].member) &&
            io_batch_add (&fix, IO_WRITE, b.ops[i].member, b.ops[i].off,
                          b.ops[i].len, b.ops[i].buf))
          goto out;
      }
  }
  /* buf now holds the right bytes for every range that failed. */
  r = 0;
  if (fix.n) {
    array_run (a, &fix);
    r = array_settle_repairs (a, &fix);
  }
 out:
  array_unlock_units (a, first, last);
  io_batch_free (&b);
  io_batch_free (&fix);
  return r;
}

/* Write every copy that is still in the array. */
static int
copies_write (struct raid_array *a, const uint8_t *buf, uint64_t count,
              uint64_t offset)
{
  const struct raid_geometry *g = &a->geo;
  struct place places[RAID_MAX_MEMBERS];
  uint64_t first = offset / g->unit_bytes;
  uint64_t last = (offset + count - 1) / g->unit_bytes;
  struct member_set gone;
  struct io_batch b;
  int r = -1;

  io_batch_init (&b);
  array_lock_units (a, first, last, true);
  array_unavailable (a, &gone);
  while (count > 0) {
    uint64_t unit = offset / g->unit_bytes, within = offset % g->unit_bytes;
    uint64_t len = g->unit_bytes - within;
    unsigned n = geometry_unit_places (g, unit, places), i;

    if (len > count)
      len = count;
    for (i = 0; i < n; i++)
      if (!member_set_has (&gone, places[i].disk) &&
          io_batch_add (&b, buf ? IO_WRITE : IO_ZERO, places[i].disk,
                        places[i].member_unit * g->unit_bytes + within, len,
                        (void *) buf))
        goto out;
    if (buf)
      buf += len;
    offset += len;
    count -= len;
  }
  array_run (a, &b);
  r = array_settle_writes (a, &b);
 out:
  array_unlock_units (a, first, last);
  io_batch_free (&b);
  return r;
}

/* The first copy that is still active (or the first, if none is). */
static void
copies_locate (const struct raid_array *a, uint64_t unit, unsigned *member,
               uint64_t *member_off)
{
  struct place places[RAID_MAX_MEMBERS];
  unsigned n = geometry_unit_places (&a->geo, unit, places), i;

  for (i = 0; i + 1 < n; i++)
    if (slot_state (&a->slots[places[i].disk]) == SLOT_ACTIVE)
      break;
  *member = places[i].disk;
  *member_off = places[i].member_unit * a->geo.unit_bytes;
}

static uint64_t
copies_sync_units (const struct raid_array *a)
{
  return a->geo.copies > 1 ?
    (a->geo.array_bytes + a->geo.unit_bytes - 1) / a->geo.unit_bytes : 0;
}

/* Copy a window: a failed read stops the sync (there is no other copy
 * to trust), a failed write fails that member. */
static int
sync_window (struct raid_array *a, struct io_batch *reads,
             struct io_batch *writes)
{
  size_t i;

  if (array_run (a, reads)) {
    for (i = 0; i < reads->n; i++)
      if (reads->ops[i].err)
        array_log (a, RAID_LOG_ERROR, "array %s: sync: member %u (%s): "
                   "pread at %" PRIu64 ": %s", a->name, reads->ops[i].member,
                   a->slots[reads->ops[i].member].path,
                   reads->ops[i].off, strerror (reads->ops[i].err));
    errno = EIO;
    return -1;
  }
  array_run (a, writes);
  return array_settle_writes (a, writes);
}

/* Bytes of units handled per sync round: big enough for sequential
 * member I/O, small enough to bound memory. */
#define SYNC_WINDOW_BYTES (8 * 1024 * 1024)

/* Copy the first copy of each unit over the others, a window of units
 * at a time: one parallel batch of reads, then one of writes. */
static int
copies_sync (struct raid_array *a, uint64_t first, uint64_t n)
{
  const struct raid_geometry *g = &a->geo;
  uint64_t window = SYNC_WINDOW_BYTES / g->unit_bytes, u, w;
  struct place places[RAID_MAX_MEMBERS];
  struct io_batch reads, writes;
  uint8_t *buf;
  int r = 0;

  if (window == 0)
    window = 1;
  if (posix_memalign ((void **) &buf, 4096, window * g->unit_bytes) != 0) {
    errno = ENOMEM;
    return -1;
  }
  io_batch_init (&reads);
  io_batch_init (&writes);
  for (u = first; u < first + n && r == 0; u += w) {
    uint64_t i;

    w = first + n - u < window ? first + n - u : window;
    io_batch_reset (&reads);
    io_batch_reset (&writes);
    for (i = 0; i < w && r == 0; i++) {
      uint64_t len = g->array_bytes - (u + i) * g->unit_bytes;
      unsigned copies = geometry_unit_places (g, u + i, places), c;
      uint8_t *p = buf + i * g->unit_bytes;

      if (len > g->unit_bytes)
        len = g->unit_bytes;
      r = io_batch_add (&reads, IO_READ, places[0].disk,
                        places[0].member_unit * g->unit_bytes, len, p);
      for (c = 1; c < copies && r == 0; c++)
        r = io_batch_add (&writes, IO_WRITE, places[c].disk,
                          places[c].member_unit * g->unit_bytes, len, p);
    }
    if (r == 0) {
      array_lock_units (a, u, u + w - 1, true);
      r = sync_window (a, &reads, &writes);
      array_unlock_units (a, u, u + w - 1);
    }
  }
  io_batch_free (&reads);
  io_batch_free (&writes);
  free (buf);
  return r;
}

const struct raid_level_ops copies_level_ops = {
  .lock_key = copies_lock_key,
  .read = copies_read,
  .write = copies_write,
  .locate = copies_locate,
  .sync_units = copies_sync_units,
  .sync = copies_sync,
};
