/* nbdraid: reads and writes for the parity family (RAID5, RAID6).
 *
 * A write is cut into segments: one stripe, a 4K-aligned column range
 * [lo, hi) of its chunks, and the run of data chunks the request
 * writes across all of that range.  Each segment independently takes
 * md's choice: reconstruct-write (read the data it does not write,
 * compute parity from scratch) or read-modify-write (read the old data
 * and parity, fold the difference in), whichever reads fewer blocks.  A
 * segment that covers its whole stripe reads nothing at all.
 *
 * Segments are handled in windows: one parallel batch of every read in
 * the window, the parity arithmetic, one parallel batch of every write.
 */
#include <config.h>

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

#define COLUMN 4096ULL
/* Temporary buffer bytes per window, and segments per window. */
#define WINDOW_BYTES (16 * 1024 * 1024)
#define WINDOW_SEGMENTS 256

struct segment {
  uint64_t stripe;
  uint64_t lo, hi;              /* columns within each chunk */
  unsigned first, last;         /* data indices written in all of lo..hi;
                                 * first > last: none (a resync) */
  bool rmw;
  bool full;                    /* every data chunk fully written */
  struct stripe_map map;
  uint8_t *block;               /* temporaries, from parity_buffers_alloc */
  uint8_t *tmp[RAID_MAX_MEMBERS];       /* by data index, or NULL */
  uint8_t *parity[2];
};

/* One write request, as the segments see it. */
struct request {
  struct raid_array *a;
  const uint8_t *buf;           /* NULL: zeros */
  uint64_t offset, count;
  uint64_t chunk, stripe_bytes;
  bool resync;                  /* recompute parity, write no data */
};

static uint64_t
parity_lock_key (const struct raid_array *a, uint64_t unit)
{
  return unit / a->geo.data_members;
}

static uint64_t
min64 (uint64_t a, uint64_t b)
{
  return a < b ? a : b;
}

static uint64_t
max64 (uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

/* The columns of data chunk i in segment s that the request writes. */
static void
covered (const struct request *rq, const struct segment *s, unsigned i,
         uint64_t *from, uint64_t *to)
{
  uint64_t chunk_start = s->stripe * rq->stripe_bytes + i * rq->chunk;

  *from = max64 (s->lo, rq->offset > chunk_start
                 ? rq->offset - chunk_start : 0);
  *to = min64 (s->hi, rq->offset + rq->count - chunk_start);
}

static bool
written (const struct segment *s, unsigned i)
{
  return i >= s->first && i <= s->last;
}

static bool
fully_written (const struct request *rq, const struct segment *s,
               unsigned i)
{
  uint64_t from, to;

  if (!written (s, i))
    return false;
  covered (rq, s, i, &from, &to);
  return from == s->lo && to == s->hi;
}

/* The request's bytes for column col of data chunk i. */
static const uint8_t *
source (const struct request *rq, const struct segment *s, unsigned i,
        uint64_t col)
{
  if (!rq->buf)
    return rq->a->zeros;
  return rq->buf + (s->stripe * rq->stripe_bytes + i * rq->chunk + col -
                    rq->offset);
}

/* Decide how to update a segment and allocate its temporaries.
 * Returns the temporary bytes, or -1 on ENOMEM. */
static int64_t
prepare (const struct request *rq, struct segment *s)
{
  const struct raid_geometry *g = &rq->a->geo;
  unsigned d = g->data_members, i, rcw_reads = 0, ntmp = 0;
  unsigned rmw_reads = (s->first <= s->last ? s->last - s->first + 1 : 0) +
    g->parity_members;
  uint8_t *bufs[RAID_MAX_MEMBERS + 2];
  uint64_t w = s->hi - s->lo;

  for (i = 0; i < d; i++)
    if (!fully_written (rq, s, i))
      rcw_reads++;
  s->full = rcw_reads == 0;
  s->rmw = !rq->resync && rmw_reads < rcw_reads;
  ntmp = (s->rmw ? rmw_reads : rcw_reads + g->parity_members);
  s->block = parity_buffers_alloc (ntmp, w, rq->a->direct, bufs);
  if (!s->block)
    return -1;
  ntmp = 0;
  for (i = 0; i < d; i++)
    s->tmp[i] = (s->rmw ? written (s, i) : !fully_written (rq, s, i))
      ? bufs[ntmp++] : NULL;
  s->parity[0] = bufs[ntmp++];
  s->parity[1] = g->parity_members == 2 ? bufs[ntmp++] : NULL;
  return (int64_t) (ntmp * w);
}

static int
add_reads (const struct request *rq, const struct segment *s,
           struct io_batch *b)
{
  const struct raid_geometry *g = &rq->a->geo;
  uint64_t off = s->stripe * g->chunk_bytes + s->lo, w = s->hi - s->lo;
  unsigned i;

  for (i = 0; i < g->data_members; i++)
    if (s->tmp[i] &&
        io_batch_add (b, IO_READ, s->map.data_disk[i], off, w, s->tmp[i]))
      return -1;
  if (s->rmw) {
    if (io_batch_add (b, IO_READ, s->map.p_disk, off, w, s->parity[0]))
      return -1;
    if (s->parity[1] &&
        io_batch_add (b, IO_READ, s->map.q_disk, off, w, s->parity[1]))
      return -1;
  }
  return 0;
}

/* Copy the request's bytes over the old contents in tmp[i]. */
static void
overlay (const struct request *rq, const struct segment *s, unsigned i)
{
  uint64_t from, to;

  covered (rq, s, i, &from, &to);
  memcpy (s->tmp[i] + (from - s->lo), source (rq, s, i, from), to - from);
}

/* Compute the new parity; leave in data[i] the new contents of every
 * data chunk the computation needed. */
static void
compute (const struct request *rq, struct segment *s,
         const uint8_t **data)
{
  const struct raid_geometry *g = &rq->a->geo;
  const struct parity_code *code = &rq->a->code;
  uint8_t *ordered[RAID_MAX_MEMBERS];
  size_t w = s->hi - s->lo;
  unsigned i;

  for (i = 0; i < g->data_members; i++) {
    data[i] = s->tmp[i];
    if (!written (s, i))
      continue;
    if (s->rmw)                 /* take the old contents out of parity */
      parity_update (code, w, s->map.q_coef[i], s->tmp[i], s->parity);
    if (fully_written (rq, s, i))
      data[i] = source (rq, s, i, s->lo);
    else
      overlay (rq, s, i);
    if (s->rmw)                 /* and put the new ones in */
      parity_update (code, w, s->map.q_coef[i], data[i], s->parity);
  }
  if (!s->rmw) {
    for (i = 0; i < g->data_members; i++)
      ordered[s->map.q_coef[i]] = (uint8_t *) data[i];
    parity_encode (code, w, ordered, s->parity);
  }
}

static int
add_writes (const struct request *rq, struct segment *s,
            struct io_batch *b)
{
  const struct raid_geometry *g = &rq->a->geo;
  uint64_t off = s->stripe * g->chunk_bytes + s->lo, w = s->hi - s->lo;
  const uint8_t *data[RAID_MAX_MEMBERS];
  unsigned i;

  /* Zeroing whole stripes: zeros have zero parity, so deallocate the
   * stripe on every member instead of writing it. */
  if (!rq->buf && s->full && w == g->chunk_bytes) {
    for (i = 0; i < g->members; i++)
      if (io_batch_add (b, IO_ZERO, i, off, w, NULL))
        return -1;
    return 0;
  }
  compute (rq, s, data);
  for (i = s->first; i <= s->last; i++)
    if (io_batch_add (b, IO_WRITE, s->map.data_disk[i], off, w,
                      (void *) data[i]))
      return -1;
  if (io_batch_add (b, IO_WRITE, s->map.p_disk, off, w, s->parity[0]))
    return -1;
  if (s->parity[1] &&
      io_batch_add (b, IO_WRITE, s->map.q_disk, off, w, s->parity[1]))
    return -1;
  return 0;
}

static int
run_window (const struct request *rq, struct segment *segs, unsigned n)
{
  struct io_batch b;
  unsigned i;
  int r = -1;

  io_batch_init (&b);
  for (i = 0; i < n; i++)
    if (add_reads (rq, &segs[i], &b))
      goto out;
  if (array_run (rq->a, &b))
    goto out;
  io_batch_reset (&b);
  for (i = 0; i < n; i++)
    if (add_writes (rq, &segs[i], &b))
      goto out;
  r = array_run (rq->a, &b);
 out:
  io_batch_free (&b);
  return r;
}

/* Cut the request's part of one stripe into segments, appending them
 * to segs.  Returns how many were added (at most 3). */
static unsigned
cut_stripe (const struct request *rq, uint64_t stripe, struct segment *segs)
{
  uint64_t C = rq->chunk, base = stripe * rq->stripe_bytes;
  uint64_t rs = max64 (rq->offset, base) - base;
  uint64_t re = min64 (rq->offset + rq->count, base + rq->stripe_bytes) - base;
  unsigned first = rs / C, last = (re - 1) / C, n = 0, k;
  uint64_t x4 = (rs - first * C) / COLUMN * COLUMN;
  uint64_t y4 = (re - last * C + COLUMN - 1) / COLUMN * COLUMN;
  uint64_t cuts[4] = { 0, C, C, C };
  unsigned ncuts = 2;

  /* The first chunk is written from column x4, the last up to y4, the
   * ones between entirely; cut where that set changes. */
  if (first == last) {
    cuts[0] = x4;
    cuts[1] = y4;
  }
  else {
    uint64_t a = min64 (x4, y4), b = max64 (x4, y4);
    ncuts = 0;
    cuts[ncuts++] = 0;
    if (a > 0 && a < C)
      cuts[ncuts++] = a;
    if (b > a && b < C)
      cuts[ncuts++] = b;
    cuts[ncuts++] = C;
  }
  for (k = 0; k + 1 < ncuts; k++) {
    struct segment *s = &segs[n];
    unsigned f = first, l = last;

    if (first != last) {
      f = cuts[k] >= x4 ? first : first + 1;
      l = cuts[k + 1] <= y4 ? last : last - 1;
      if (f > l)
        continue;               /* a gap no chunk writes */
    }
    memset (s, 0, offsetof (struct segment, map));
    s->stripe = stripe;
    s->lo = cuts[k];
    s->hi = cuts[k + 1];
    s->first = f;
    s->last = l;
    geometry_stripe_map (&rq->a->geo, stripe, &s->map);
    n++;
  }
  return n;
}

static void
free_segments (struct segment *segs, unsigned n)
{
  unsigned i;

  for (i = 0; i < n; i++)
    parity_buffers_free (segs[i].block);
}

static int
parity_write (struct raid_array *a, const uint8_t *buf, uint64_t count,
              uint64_t offset)
{
  const struct raid_geometry *g = &a->geo;
  struct request rq = {
    .a = a, .buf = buf, .offset = offset, .count = count,
    .chunk = g->chunk_bytes, .stripe_bytes = g->chunk_bytes * g->data_members,
  };
  uint64_t first = offset / rq.stripe_bytes;
  uint64_t last = (offset + count - 1) / rq.stripe_bytes, stripe;
  struct segment *segs = malloc ((WINDOW_SEGMENTS + 3) * sizeof *segs);
  unsigned n = 0, i, added;
  int64_t bytes = 0, tb;
  int r = 0;

  if (!segs) {
    errno = ENOMEM;
    return -1;
  }
  stripe_lock (&a->locks, first, last, true);
  for (stripe = first; stripe <= last && r == 0; stripe++) {
    added = cut_stripe (&rq, stripe, &segs[n]);
    for (i = n; i < n + added; i++) {
      tb = prepare (&rq, &segs[i]);
      if (tb == -1) {
        r = -1;
        added = i - n;
        break;
      }
      bytes += tb;
    }
    n += added;
    if (r == 0 && (bytes >= WINDOW_BYTES || n >= WINDOW_SEGMENTS ||
                   stripe == last)) {
      r = run_window (&rq, segs, n);
      free_segments (segs, n);
      n = 0;
      bytes = 0;
    }
  }
  free_segments (segs, n);
  stripe_unlock (&a->locks, first, last);
  free (segs);
  return r;
}

static void
parity_locate (const struct raid_array *a, uint64_t unit, unsigned *member,
               uint64_t *member_off)
{
  struct stripe_map map;
  uint64_t stripe = unit / a->geo.data_members;

  geometry_stripe_map (&a->geo, stripe, &map);
  *member = map.data_disk[unit % a->geo.data_members];
  *member_off = stripe * a->geo.chunk_bytes;
}

/* Healthy reads touch data chunks only; the shared lock keeps them out
 * of stripes that a writer is halfway through. */
static int
parity_read (struct raid_array *a, uint8_t *buf, uint64_t count,
             uint64_t offset)
{
  const uint64_t C = a->geo.chunk_bytes;
  uint64_t first = offset / C, last = (offset + count - 1) / C;
  struct io_batch b;
  int r = -1;

  io_batch_init (&b);
  array_lock_units (a, first, last, false);
  while (count > 0) {
    uint64_t within = offset % C, len = min64 (C - within, count), moff;
    unsigned member;

    parity_locate (a, offset / C, &member, &moff);
    if (io_batch_add (&b, IO_READ, member, moff + within, len, buf))
      goto out;
    buf += len;
    offset += len;
    count -= len;
  }
  r = array_run (a, &b);
 out:
  array_unlock_units (a, first, last);
  io_batch_free (&b);
  return r;
}

static uint64_t
parity_sync_units (const struct raid_array *a)
{
  return a->geo.member_bytes / a->geo.chunk_bytes;
}

/* Recompute P (and Q) of stripes first..first+n-1 from their data. */
static int
parity_sync (struct raid_array *a, uint64_t first, uint64_t n)
{
  const struct raid_geometry *g = &a->geo;
  struct request rq = {
    .a = a, .buf = NULL, .offset = 0, .count = 0,
    .chunk = g->chunk_bytes, .stripe_bytes = g->chunk_bytes * g->data_members,
    .resync = true,
  };
  uint64_t per_stripe = (uint64_t) g->members * g->chunk_bytes;
  uint64_t window = WINDOW_BYTES / per_stripe, s, w, i;
  struct segment *segs;
  int r = 0;

  if (window == 0)
    window = 1;
  if (window > WINDOW_SEGMENTS)
    window = WINDOW_SEGMENTS;
  segs = malloc (window * sizeof *segs);
  if (!segs) {
    errno = ENOMEM;
    return -1;
  }
  for (s = first; s < first + n && r == 0; s += w) {
    w = min64 (window, first + n - s);
    /* Segments that write no data chunk: reconstruct-write reads every
     * data chunk and writes only parity. */
    for (i = 0; i < w && r == 0; i++) {
      struct segment *seg = &segs[i];
      memset (seg, 0, offsetof (struct segment, map));
      seg->stripe = s + i;
      seg->lo = 0;
      seg->hi = g->chunk_bytes;
      seg->first = 1;
      seg->last = 0;
      geometry_stripe_map (g, s + i, &seg->map);
      if (prepare (&rq, seg) == -1) {
        free_segments (segs, i);
        r = -1;
      }
    }
    if (r == 0) {
      stripe_lock (&a->locks, s, s + w - 1, true);
      r = run_window (&rq, segs, w);
      stripe_unlock (&a->locks, s, s + w - 1);
      free_segments (segs, w);
    }
  }
  free (segs);
  return r;
}

const struct raid_level_ops parity_level_ops = {
  .lock_key = parity_lock_key,
  .read = parity_read,
  .write = parity_write,
  .locate = parity_locate,
  .sync_units = parity_sync_units,
  .sync = parity_sync,
};
