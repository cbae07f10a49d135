/* nbdraid: the members' I/O while a reshape runs: RAID5 chunks read
 * and written at the members' absolute offsets in the old geometry
 * (addresses at and above the front) or the new one (below it), for
 * the clients' requests and for the job's windows.
 *
 * The level's request paths know one geometry; these know two, and
 * stay simple instead: a read goes to the chunks that hold the bytes,
 * a write recomputes its parity bytes from the other data chunks of
 * the stripe (a reconstruct-write), one chunk piece at a time under
 * the reshape lock held alone.  A reshape is a passing state: its
 * requests are correct first.  One role may be gone (failed, missing),
 * as RAID5 allows, in md's way: its chunks are rebuilt from the rest
 * of their stripe when read, and left out when written (the parity
 * still covers them).  A write that fails fails its member, as
 * anywhere; a read that fails fails the request (EIO).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

uint64_t
reshape_member_offset (const struct raid_array *a, unsigned m, bool new_geo,
                       uint64_t off)
{
  return a->slots[m].data_offset_bytes - (new_geo ? a->reshape.delta : 0) + off;
}

uint64_t
reshape_stripe_bytes (const struct raid_array *a)
{
  return a->geo.chunk_bytes * a->geo.data_members;
}

void
reshape_sync_units (const struct raid_array *a, uint64_t offset, uint64_t count,
                    uint64_t *first, uint64_t *last)
{
  *first = offset / reshape_stripe_bytes (a);
  *last = (offset + count - 1)
          / (a->geo.chunk_bytes * a->reshape.old.data_members);
}

/* Where array byte addr lies in geometry g: its stripe's map, its data
 * index, its role and the byte of that role's data area. */
struct spot {
  struct stripe_map map;
  uint64_t stripe, within, member_off;
  unsigned idx, disk;
};

static void
locate (const struct raid_geometry *g, uint64_t addr, struct spot *sp)
{
  uint64_t unit = addr / g->chunk_bytes;

  sp->stripe = unit / g->data_members;
  sp->idx = (unsigned)(unit % g->data_members);
  sp->within = addr % g->chunk_bytes;
  geometry_stripe_map (g, sp->stripe, &sp->map);
  sp->disk = sp->map.data_disk[sp->idx];
  sp->member_off = sp->stripe * g->chunk_bytes + sp->within;
}

/* Add an op at an absolute offset of role m (in geometry new_geo). */
static int
add_op (struct raid_array *a, struct io_batch *b, enum io_kind kind, unsigned m,
        bool new_geo, uint64_t off, uint64_t len, void *buf)
{
  if (io_batch_add (b, kind, m, reshape_member_offset (a, m, new_geo, off), len,
                    buf)
      == -1)
    return -1;
  b->ops[b->last[m]].metadata = true;
  return 0;
}

/* Run b; an op that failed is logged with its member and offset, and
 * the whole fails with EIO. */
static int
run (struct raid_array *a, struct io_batch *b)
{
  size_t i;

  if (array_run (a, b) == 0)
    return 0;
  for (i = 0; i < b->n; i++)
    if (b->ops[i].err) {
      const struct io_op *op = &b->ops[i];
      array_log (a, RAID_LOG_ERROR,
                 "array %s: reshape: member %u (%s): %s "
                 "at %" PRIu64 ": %s",
                 a->name, op->member, array_slot (a, op->member)->path,
                 io_kind_name (op->kind), op->off, strerror (op->err));
      break;
    }
  errno = EIO;
  return -1;
}

int
reshape_gone (const struct raid_array *a, unsigned *gone)
{
  unsigned m;

  *gone = GEOMETRY_NO_DISK;
  for (m = 0; m < a->geo.members; m++) {
    if (slot_state (&a->slots[m]) == SLOT_ACTIVE)
      continue;
    if (*gone != GEOMETRY_NO_DISK) {
      errno = EIO;
      return -1;
    }
    *gone = m;
  }
  return 0;
}

/* p ^= q over len bytes. */
static void
xor_into (uint8_t *p, const uint8_t *q, uint64_t len)
{
  uint64_t i, x, y;

  for (i = 0; i + 8 <= len; i += 8) {
    memcpy (&x, p + i, 8);
    memcpy (&y, q + i, 8);
    x ^= y;
    memcpy (p + i, &x, 8);
  }
  for (; i < len; i++)
    p[i] ^= q[i];
}

/* Rebuild len bytes of the chunk of sp's stripe on the gone role into
 * out: the XOR of the same bytes of every other block of the stripe
 * (data and parity).  tmp holds len bytes. */
static int
rebuild_piece (struct raid_array *a, bool new_geo, const struct spot *sp,
               uint64_t len, uint8_t *out, uint8_t *tmp)
{
  const struct raid_geometry *g = new_geo ? &a->geo : &a->reshape.old;
  struct io_batch b;
  unsigned i;
  int r = 0;

  memset (out, 0, len);
  io_batch_init (&b);
  for (i = 0; i <= g->data_members && r == 0; i++) {
    unsigned disk = i < g->data_members ? sp->map.data_disk[i] : sp->map.p_disk;
    if (disk == sp->disk)
      continue;
    io_batch_reset (&b);
    r = add_op (a, &b, IO_READ, disk, new_geo, sp->member_off, len, tmp);
    if (r == 0)
      r = run (a, &b);
    if (r == 0)
      xor_into (out, tmp, len);
  }
  io_batch_free (&b);
  return r;
}

int
reshape_read_range (struct raid_array *a, bool new_geo, unsigned gone,
                    uint8_t *buf, uint64_t count, uint64_t offset)
{
  const struct raid_geometry *g = new_geo ? &a->geo : &a->reshape.old;
  uint8_t *tmp = NULL;
  struct io_batch b;
  struct spot sp;
  int r = 0;

  io_batch_init (&b);
  while (count && r == 0) {
    uint64_t len;

    locate (g, offset, &sp);
    len = g->chunk_bytes - sp.within < count ? g->chunk_bytes - sp.within
                                             : count;
    if (sp.disk != gone)
      r = add_op (a, &b, IO_READ, sp.disk, new_geo, sp.member_off, len, buf);
    else if (!tmp && !(tmp = malloc (g->chunk_bytes)))
      r = -1;
    else
      r = rebuild_piece (a, new_geo, &sp, len, buf, tmp);
    buf += len;
    offset += len;
    count -= len;
  }
  if (r == 0)
    r = run (a, &b);
  io_batch_free (&b);
  free (tmp);
  return r;
}

/* Run writes b; a member a write fails on is failed, as anywhere:
 * an error only if the array lost data with it. */
static int
run_writes (struct raid_array *a, struct io_batch *b)
{
  array_run (a, b);
  return array_settle_writes (a, b);
}

/* Write len bytes inside one chunk at array byte offset in geometry
 * new_geo (data NULL: zeros), the gone role left out: the same bytes of
 * the stripe's other data chunks are read and the parity bytes
 * computed from them and the new data; with another data chunk gone,
 * the old parity and data are read instead and the new parity is
 * P ^ old ^ new.  scratch holds data_members + 1 chunks. */
static int
write_piece (struct raid_array *a, bool new_geo, unsigned gone,
             const uint8_t *data, uint64_t len, uint64_t offset,
             uint8_t *scratch)
{
  const struct raid_geometry *g = new_geo ? &a->geo : &a->reshape.old;
  uint8_t *p = scratch, *zeros = scratch + len, *others = zeros + len;
  unsigned i, k = 0;
  bool rmw = false;
  struct io_batch b;
  struct spot sp;
  int r = 0;

  locate (g, offset, &sp);
  for (i = 0; i < g->data_members; i++)
    rmw |= i != sp.idx && sp.map.data_disk[i] == gone;
  if (!data) {
    memset (zeros, 0, len);
    data = zeros;
  }
  io_batch_init (&b);
  if (rmw) {
    r = add_op (a, &b, IO_READ, sp.disk, new_geo, sp.member_off, len, others);
    if (r == 0)
      r = add_op (a, &b, IO_READ, sp.map.p_disk, new_geo, sp.member_off, len,
                  p);
  }
  else if (sp.map.p_disk != gone)
    for (i = 0; i < g->data_members && r == 0; i++)
      if (i != sp.idx)
        r = add_op (a, &b, IO_READ, sp.map.data_disk[i], new_geo, sp.member_off,
                    len, others + len * k++);
  if (r == 0)
    r = run (a, &b);
  if (r == 0) {
    if (rmw) {
      xor_into (p, others, len);
      xor_into (p, data, len);
    }
    else {
      memcpy (p, data, len);
      for (i = 0; i < k; i++)
        xor_into (p, others + len * i, len);
    }
    io_batch_reset (&b);
    if (sp.disk != gone)
      r = add_op (a, &b, IO_WRITE, sp.disk, new_geo, sp.member_off, len,
                  (void *)data);
    if (r == 0 && sp.map.p_disk != gone)
      r = add_op (a, &b, IO_WRITE, sp.map.p_disk, new_geo, sp.member_off, len,
                  p);
    if (r == 0)
      r = run_writes (a, &b);
  }
  io_batch_free (&b);
  return r;
}

int
reshape_write_stripes (struct raid_array *a, unsigned gone, const uint8_t *data,
                       uint64_t first, uint64_t last)
{
  const struct raid_geometry *g = &a->geo;
  const uint64_t C = g->chunk_bytes, S = reshape_stripe_bytes (a);
  uint8_t *parity = malloc ((last - first) * C);
  struct io_batch b;
  uint64_t s;
  unsigned i;
  int r = parity ? 0 : -1;

  io_batch_init (&b);
  for (s = first; s < last && r == 0; s++) {
    const uint8_t *d = data + (s - first) * S;
    uint8_t *p = parity + (s - first) * C;
    struct stripe_map map;

    geometry_stripe_map (g, s, &map);
    memcpy (p, d, C);
    for (i = 1; i < g->data_members; i++)
      xor_into (p, d + i * C, C);
    for (i = 0; i < g->data_members && r == 0; i++)
      if (map.data_disk[i] != gone)
        r = add_op (a, &b, IO_WRITE, map.data_disk[i], true, s * C, C,
                    (void *)(d + i * C));
    if (r == 0 && map.p_disk != gone)
      r = add_op (a, &b, IO_WRITE, map.p_disk, true, s * C, C, p);
  }
  if (r == 0)
    r = run_writes (a, &b);
  io_batch_free (&b);
  free (parity);
  return r;
}

/* The front as an array address: below it, the new geometry. */
static uint64_t
boundary (const struct raid_array *a)
{
  return __atomic_load_n (&a->reshape.front, __ATOMIC_ACQUIRE)
         * reshape_stripe_bytes (a);
}

int
reshape_read (struct raid_array *a, void *buf, uint64_t count, uint64_t offset)
{
  uint8_t *p = buf;
  uint64_t edge, len;
  unsigned gone;
  int r;

  pthread_rwlock_rdlock (&a->reshape.lock);
  r = reshape_gone (a, &gone);
  edge = boundary (a);
  if (r == 0 && offset < edge) {
    len = edge - offset < count ? edge - offset : count;
    r = reshape_read_range (a, true, gone, p, len, offset);
    p += len;
    offset += len;
    count -= len;
  }
  if (r == 0 && count)
    r = reshape_read_range (a, false, gone, p, count, offset);
  pthread_rwlock_unlock (&a->reshape.lock);
  return r;
}

int
reshape_write (struct raid_array *a, const void *buf, uint64_t count,
               uint64_t offset)
{
  const uint64_t C = a->geo.chunk_bytes, S = reshape_stripe_bytes (a);
  const uint8_t *d = buf;
  uint8_t *scratch = malloc ((a->geo.data_members + 1) * C);
  int r = scratch ? 0 : -1;

  pthread_rwlock_wrlock (&a->reshape.lock);
  while (count && r == 0) {
    unsigned gone;
    uint64_t edge = boundary (a), len = C - offset % C;
    bool new_geo = offset < edge;

    /* The front is a stripe boundary: no piece of a chunk straddles it. */
    if (len > count)
      len = count;
    /* Bytes between the superblocks' reshape_position and the front
     * would be read in the old geometry after a crash: the superblocks
     * move up to the front before the new geometry gets them. */
    if (new_geo && offset + len > a->reshape.safe * S)
      r = reshape_checkpoint (a);
    /* A member may fail with any piece: looked at each time. */
    if (r == 0)
      r = reshape_gone (a, &gone);
    if (r == 0)
      r = write_piece (a, new_geo, gone, d, len, offset, scratch);
    if (d)
      d += len;
    offset += len;
    count -= len;
  }
  pthread_rwlock_unlock (&a->reshape.lock);
  free (scratch);
  return r;
}
