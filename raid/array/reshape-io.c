/* nbdraid: the members' I/O while a reshape runs: RAID5/6 chunks read
 * and written at the members' absolute offsets in the old geometry
 * or the new one (on the side of the front the job has moved), for
 * the clients' requests and for the job's windows.
 *
 * The level's request paths know one geometry; these know two, and
 * stay simple instead: a read goes to the chunks that hold the bytes,
 * a write reads its stripe's column and computes the parity again
 * with the new bytes in (a reconstruct-write), one chunk piece at a
 * time under the reshape lock held alone.  A reshape is a passing
 * state: its requests are correct first.  As many roles may be gone
 * (failed, missing) as the level's parity covers, in md's way: their
 * chunks are computed from the rest of their stripe when read, and
 * left out when written (the parity still covers them).  A write that
 * fails fails its member, as anywhere; a read that fails fails the
 * request (EIO).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

unsigned
reshape_leaving (const struct raid_array *a)
{
  const struct raid_reshape *r = &a->reshape;

  return r->active && r->backwards ? r->old.members - a->geo.members : 0;
}

uint64_t
reshape_member_offset (const struct raid_array *a, unsigned m, bool new_geo,
                       uint64_t off)
{
  const struct raid_reshape *r = &a->reshape;
  uint64_t at = array_slot ((struct raid_array *)a, m)->data_offset_bytes + off;

  if (!new_geo)
    return at;
  return r->backwards ? at + r->delta : at - r->delta;
}

uint64_t
reshape_stripe_of (const struct raid_geometry *g)
{
  return g->parity_members ? g->chunk_bytes * g->data_members : g->chunk_bytes;
}

uint64_t
reshape_stripe_bytes (const struct raid_array *a)
{
  return reshape_stripe_of (&a->geo);
}

/* The rows (member units) RAID10 unit u takes in g: its first copy's
 * and its last's (near and offset layouts put later units no lower). */
static void
unit_rows (const struct raid_geometry *g, uint64_t u, uint64_t *lo,
           uint64_t *hi)
{
  struct place places[RAID_MAX_MEMBERS];
  unsigned i, n = geometry_unit_places (g, u, places);

  *lo = *hi = places[0].member_unit;
  for (i = 1; i < n; i++) {
    if (places[i].member_unit < *lo)
      *lo = places[i].member_unit;
    if (places[i].member_unit > *hi)
      *hi = places[i].member_unit;
  }
}

uint64_t
reshape_first_byte (const struct raid_array *a, bool new_geo, uint64_t x)
{
  const struct raid_geometry *g = new_geo ? &a->geo : &a->reshape.old;
  uint64_t lo, hi;

  if (g->parity_members)
    return x / reshape_stripe_of (g) * g->chunk_bytes;
  unit_rows (g, x / g->chunk_bytes, &lo, &hi);
  return lo * g->chunk_bytes;
}

uint64_t
reshape_end_byte (const struct raid_array *a, bool new_geo, uint64_t x)
{
  const struct raid_geometry *g = new_geo ? &a->geo : &a->reshape.old;
  uint64_t lo, hi;

  if (g->parity_members)
    return (x + reshape_stripe_of (g) - 1) / reshape_stripe_of (g) * g->chunk_bytes;
  if (x == 0)
    return 0;
  unit_rows (g, (x - 1) / g->chunk_bytes, &lo, &hi);
  return (hi + 1) * g->chunk_bytes;
}

void
reshape_sync_units (const struct raid_array *a, uint64_t offset, uint64_t count,
                    uint64_t *first, uint64_t *last)
{
  const struct raid_geometry *o = &a->reshape.old;

  /* RAID10's are the array's units, whatever the geometry. */
  if (!a->geo.parity_members) {
    *first = offset / a->geo.unit_bytes;
    *last = (offset + count - 1) / a->geo.unit_bytes;
    return;
  }
  const uint64_t C = a->geo.chunk_bytes, end = offset + count - 1;
  /* The old geometry's stripes as member offsets, in the new one's
   * units. */
  uint64_t old_first
      = offset / (o->chunk_bytes * o->data_members) * o->chunk_bytes / C;
  uint64_t old_last
      = ((end / (o->chunk_bytes * o->data_members) + 1) * o->chunk_bytes - 1)
        / C;

  *first = offset / reshape_stripe_bytes (a);
  *last = end / reshape_stripe_bytes (a);
  if (old_first < *first)
    *first = old_first;
  if (old_last > *last)
    *last = old_last;
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

int
reshape_add_op (struct raid_array *a, struct io_batch *b, enum io_kind kind,
                unsigned m, bool new_geo, uint64_t off, uint64_t len, void *buf)
{
  if (io_batch_add (b, kind, m, reshape_member_offset (a, m, new_geo, off), len,
                    buf)
      == -1)
    return -1;
  b->ops[b->last[m]].metadata = true;
  return 0;
}

int
reshape_run (struct raid_array *a, struct io_batch *b)
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
reshape_run_writes (struct raid_array *a, struct io_batch *b)
{
  array_run (a, b);
  return array_settle_writes (a, b);
}

int
reshape_gone (const struct raid_array *a, bool new_geo, struct member_set *gone)
{
  const struct raid_geometry *g = new_geo ? &a->geo : &a->reshape.old;
  unsigned m;

  memset (gone, 0, sizeof *gone);
  for (m = 0; m < g->members; m++)
    if (slot_state (array_slot ((struct raid_array *)a, m)) != SLOT_ACTIVE
        || (!new_geo && member_set_has (&a->reshape.fresh, m)))
      member_set_add (gone, m);
  if (!geometry_survives (g, gone->bits)) {
    errno = EIO;
    return -1;
  }
  return 0;
}

uint64_t
reshape_fresh_front (const struct raid_array *a, const struct md_superblock *sb)
{
  return sb->reshape_position * 512 / reshape_stripe_bytes (a)
         * a->geo.chunk_bytes;
}

int
reshape_codes_init (struct raid_array *a)
{
  struct raid_reshape *r = &a->reshape;

  if (!a->geo.parity_members)
    return 0; /* RAID10: copies, no code */
  if (parity_init (&r->code[0], r->old.data_members, r->old.parity_members)
      == -1)
    return -1;
  if (parity_init (&r->code[1], a->geo.data_members, a->geo.parity_members)
      == -1) {
    parity_free (&r->code[0]);
    return -1;
  }
  return 0;
}

void
reshape_codes_free (struct raid_array *a)
{
  if (!a->geo.parity_members)
    return;
  parity_free (&a->reshape.code[0]);
  parity_free (&a->reshape.code[1]);
}

/* One column of a stripe in one geometry: the bytes [off, off+len) of
 * each of its chunks (member offsets in the data area), its blocks
 * numbered as the parity code numbers them (stripe_map.block_disk). */
struct col {
  const struct raid_geometry *g;
  struct parity_code *code;
  bool new_geo;
  struct stripe_map map;
  uint64_t off, len;
  uint8_t *block[RAID_MAX_MEMBERS + 2];
  bool present[RAID_MAX_MEMBERS + 2];
};

/* Column c of stripe sp in geometry new_geo, its blocks in mem (room
 * for all of them, len bytes each). */
static void
col_init (struct raid_array *a, bool new_geo, const struct spot *sp,
          uint64_t len, uint8_t *mem, struct col *c)
{
  unsigned b;

  c->g = new_geo ? &a->geo : &a->reshape.old;
  c->code = &a->reshape.code[new_geo];
  c->new_geo = new_geo;
  c->map = sp->map;
  c->off = sp->member_off;
  c->len = len;
  for (b = 0; b < c->g->data_members + c->g->parity_members; b++)
    c->block[b] = mem + b * len;
}

/* Read every block of c not on a gone role, then compute the data
 * blocks of the gone ones from them. */
static int
col_read (struct raid_array *a, struct col *c, const struct member_set *gone)
{
  unsigned b, n = c->g->data_members + c->g->parity_members;
  struct io_batch batch;
  int r = 0;

  io_batch_init (&batch);
  for (b = 0; b < n && r == 0; b++) {
    c->present[b] = !member_set_has (gone, c->map.block_disk[b]);
    if (c->present[b])
      r = reshape_add_op (a, &batch, IO_READ, c->map.block_disk[b],
                          c->new_geo, c->off, c->len, c->block[b]);
  }
  if (r == 0)
    r = reshape_run (a, &batch);
  io_batch_free (&batch);
  if (r == 0)
    r = parity_recover (c->code, c->len, c->present, c->block);
  return r;
}

/* Write blocks of c to their roles, those in gone left out (the parity
 * covers them): the data block `data_block` (or none, past the data
 * blocks) and the parity blocks. */
static int
col_write (struct raid_array *a, struct col *c, unsigned data_block,
           const struct member_set *gone)
{
  unsigned b, k = c->g->data_members, n = k + c->g->parity_members;
  struct io_batch batch;
  int r = 0;

  io_batch_init (&batch);
  for (b = 0; b < n && r == 0; b++)
    if ((b == data_block || b >= k)
        && !member_set_has (gone, c->map.block_disk[b]))
      r = reshape_add_op (a, &batch, IO_WRITE, c->map.block_disk[b],
                          c->new_geo, c->off, c->len, c->block[b]);
  if (r == 0)
    r = reshape_run_writes (a, &batch);
  io_batch_free (&batch);
  return r;
}

/* Bytes a column of either geometry takes, every block len bytes. */
static size_t
col_bytes (const struct raid_array *a, uint64_t len)
{
  unsigned n = a->geo.members > a->reshape.old.members
                   ? a->geo.members
                   : a->reshape.old.members;

  return n * len;
}

/* Read array bytes [offset, offset+count) of geometry new_geo into buf
 * piece by piece, each piece from its chunk or, when its role is gone
 * or the chunk's read fails, from the rest of its stripe's column (a
 * read error is computed around, as the level's reads do, but not
 * rewritten: the reshape writes the bytes anew).  mem holds a column
 * of chunks. */
static int
read_pieces (struct raid_array *a, bool new_geo, const struct member_set *gone,
             uint8_t *buf, uint64_t count, uint64_t offset, uint8_t *mem)
{
  const struct raid_geometry *g = new_geo ? &a->geo : &a->reshape.old;
  struct io_batch b;
  struct spot sp;
  struct col c;
  int r = 0;

  io_batch_init (&b);
  while (count && r == 0) {
    struct member_set without = *gone;
    uint64_t len;

    locate (g, offset, &sp);
    len = g->chunk_bytes - sp.within < count ? g->chunk_bytes - sp.within
                                             : count;
    if (!member_set_has (gone, sp.disk)) {
      io_batch_reset (&b);
      r = reshape_add_op (a, &b, IO_READ, sp.disk, new_geo, sp.member_off,
                          len, buf);
      if (r == 0 && array_run (a, &b) == 0)
        goto next;
      array_log (a, RAID_LOG_WARNING,
                 "array %s: reshape: member %u (%s): read at %" PRIu64
                 ": %s; computed from the rest of its stripe",
                 a->name, sp.disk, array_slot (a, sp.disk)->path, b.ops[0].off,
                 strerror (b.ops[0].err ? b.ops[0].err : EIO));
      member_set_add (&without, sp.disk);
    }
    col_init (a, new_geo, &sp, len, mem, &c);
    r = col_read (a, &c, &without);
    if (r == 0)
      memcpy (buf, c.block[sp.map.q_coef[sp.idx]], len);
  next:
    buf += len;
    offset += len;
    count -= len;
  }
  io_batch_free (&b);
  return r;
}

int
reshape_read_range (struct raid_array *a, bool new_geo,
                    const struct member_set *gone, uint8_t *buf, uint64_t count,
                    uint64_t offset)
{
  const struct raid_geometry *g = new_geo ? &a->geo : &a->reshape.old;
  uint8_t *mem;
  uint64_t at = offset, left = count;
  uint8_t *p = buf;
  struct io_batch b;
  struct spot sp;
  bool whole = true;
  int r;

  if (!g->parity_members)
    return reshape_copies_read (a, new_geo, gone, buf, count, offset);
  mem = malloc (col_bytes (a, g->chunk_bytes));
  r = mem ? 0 : -1;

  /* The chunks all at once, when every role is there and reads. */
  io_batch_init (&b);
  while (left && r == 0 && whole) {
    uint64_t len;

    locate (g, at, &sp);
    len = g->chunk_bytes - sp.within < left ? g->chunk_bytes - sp.within : left;
    whole = !member_set_has (gone, sp.disk);
    if (whole)
      r = reshape_add_op (a, &b, IO_READ, sp.disk, new_geo, sp.member_off,
                          len, p);
    p += len;
    at += len;
    left -= len;
  }
  if (r == 0 && (!whole || array_run (a, &b) != 0))
    r = read_pieces (a, new_geo, gone, buf, count, offset, mem);
  io_batch_free (&b);
  free (mem);
  return r;
}

/* Write len bytes inside one chunk at array byte offset in geometry
 * new_geo (data NULL: zeros), the gone roles left out: the stripe's
 * column is read (what the gone roles held computed from the rest),
 * the new bytes put in and the parity computed again: a
 * reconstruct-write, whatever is gone.  mem holds a column of chunks. */
static int
write_piece (struct raid_array *a, bool new_geo, const struct member_set *gone,
             const uint8_t *data, uint64_t len, uint64_t offset, uint8_t *mem)
{
  const struct raid_geometry *g = new_geo ? &a->geo : &a->reshape.old;
  unsigned k = g->data_members, b;
  uint8_t *parity[2];
  struct spot sp;
  struct col c;
  int r;

  locate (g, offset, &sp);
  col_init (a, new_geo, &sp, len, mem, &c);
  r = col_read (a, &c, gone);
  if (r == -1)
    return -1;
  b = sp.map.q_coef[sp.idx];
  if (data)
    memcpy (c.block[b], data, len);
  else
    memset (c.block[b], 0, len);
  parity[0] = c.block[k];
  parity[1] = g->parity_members == 2 ? c.block[k + 1] : NULL;
  parity_encode (c.code, len, c.block, parity);
  return col_write (a, &c, b, gone);
}

int
reshape_write_stripes (struct raid_array *a, const struct member_set *gone,
                       const uint8_t *data, uint64_t first, uint64_t last)
{
  const struct raid_geometry *g = &a->geo;
  const uint64_t C = g->chunk_bytes, S = reshape_stripe_bytes (a);
  const unsigned k = g->data_members, np = g->parity_members;
  uint8_t *parity;
  struct io_batch b;
  uint64_t s;
  unsigned i;
  int r;

  if (!np)
    return reshape_copies_write (a, true, gone, data, (last - first) * C,
                                 first * C);
  parity = malloc ((last - first) * C * np);
  r = parity ? 0 : -1;

  io_batch_init (&b);
  for (s = first; s < last && r == 0; s++) {
    const uint8_t *d = data + (s - first) * S;
    uint8_t *blocks[RAID_MAX_MEMBERS], *p[2];
    struct stripe_map map;

    geometry_stripe_map (g, s, &map);
    for (i = 0; i < k; i++)
      blocks[map.q_coef[i]] = (uint8_t *)(d + i * C);
    for (i = 0; i < np; i++)
      p[i] = parity + ((s - first) * np + i) * C;
    parity_encode (&a->reshape.code[1], C, blocks, p);
    for (i = 0; i < k + np && r == 0; i++) {
      unsigned disk = map.block_disk[i];
      if (!member_set_has (gone, disk))
        r = reshape_add_op (a, &b, IO_WRITE, disk, true, s * C, C,
                            i < k ? blocks[i] : p[i - k]);
    }
  }
  if (r == 0)
    r = reshape_run_writes (a, &b);
  io_batch_free (&b);
  free (parity);
  return r;
}

/* The front as an array address. */
static uint64_t
boundary (const struct raid_array *a)
{
  return __atomic_load_n (&a->reshape.front, __ATOMIC_ACQUIRE)
         * reshape_stripe_bytes (a);
}

/* Is array byte addr in the new geometry, the front at edge? */
static bool
moved (const struct raid_array *a, uint64_t edge, uint64_t addr)
{
  return (addr < edge) != a->reshape.backwards;
}

int
reshape_read (struct raid_array *a, void *buf, uint64_t count, uint64_t offset)
{
  uint8_t *p = buf;
  uint64_t edge, len;
  struct member_set gone;
  int r = 0;

  pthread_rwlock_rdlock (&a->reshape.lock);
  edge = boundary (a);
  while (count && r == 0) {
    bool new_geo = moved (a, edge, offset);
    len = offset < edge && edge - offset < count ? edge - offset : count;
    r = reshape_gone (a, new_geo, &gone);
    if (r == 0)
      r = reshape_read_range (a, new_geo, &gone, p, len, offset);
    p += len;
    offset += len;
    count -= len;
  }
  pthread_rwlock_unlock (&a->reshape.lock);
  return r;
}

/* With the lock held alone: wait until the window being moved touches
 * none of array bytes [offset, offset+count).  The job picks no new
 * window while the lock is held. */
static void
wait_window (struct raid_array *a, uint64_t offset, uint64_t count)
{
  struct raid_reshape *r = &a->reshape;

  pthread_mutex_lock (&r->busy_mutex);
  while (r->busy_lo < r->busy_hi && offset < r->busy_hi
         && r->busy_lo < offset + count) {
    pthread_rwlock_unlock (&r->lock);
    pthread_cond_wait (&r->busy_cond, &r->busy_mutex);
    pthread_mutex_unlock (&r->busy_mutex);
    pthread_rwlock_wrlock (&r->lock);
    pthread_mutex_lock (&r->busy_mutex);
  }
  pthread_mutex_unlock (&r->busy_mutex);
}

int
reshape_write (struct raid_array *a, const void *buf, uint64_t count,
               uint64_t offset)
{
  const uint64_t C = a->geo.chunk_bytes, S = reshape_stripe_bytes (a);
  const uint64_t C0 = a->reshape.old.chunk_bytes;
  const uint8_t *d = buf;
  uint8_t *mem = malloc (col_bytes (a, C > C0 ? C : C0));
  int r = mem ? 0 : -1;

  pthread_rwlock_wrlock (&a->reshape.lock);
  wait_window (a, offset, count);
  while (count && r == 0) {
    struct member_set gone;
    uint64_t edge = boundary (a);
    bool new_geo = moved (a, edge, offset);
    uint64_t len = new_geo ? C - offset % C : C0 - offset % C0;

    /* The front is a stripe boundary: no piece of a chunk straddles it. */
    if (len > count)
      len = count;
    /* Bytes between the superblocks' reshape_position and the front
     * would be read in the old geometry after a crash: the superblocks
     * move to the front before the new geometry gets them. */
    if (new_geo && moved (a, a->reshape.safe * S, offset) != new_geo)
      r = reshape_checkpoint (a);
    /* A member may fail with any piece: looked at each time. */
    if (r == 0)
      r = reshape_gone (a, new_geo, &gone);
    if (r == 0 && !a->geo.parity_members)
      r = reshape_copies_write (a, new_geo, &gone, d, len, offset);
    else if (r == 0)
      r = write_piece (a, new_geo, &gone, d, len, offset, mem);
    if (d)
      d += len;
    offset += len;
    count -= len;
  }
  pthread_rwlock_unlock (&a->reshape.lock);
  free (mem);
  return r;
}
