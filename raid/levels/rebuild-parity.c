/* nbdraid: what a member of a parity array holds, rebuilt from the
 * others (recovery, replacement, read-error repair).
 *
 * Every member holds one chunk of each stripe at the same offset of its
 * data area, so a member's byte range is the same range on every other
 * member: one read per survivor, all in parallel, then each stripe's
 * column is recovered in place.  Windows bound the memory of wide
 * arrays; the buffers come from the caller's scratch, so a rebuild
 * reuses the same pages window after window.
 */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "stripe-column.h"

/* The survivors' buffers of one window together. */
#define WINDOW_BYTES (32 * 1024 * 1024ULL)

/* Member bytes per window: the widest array (RAID_MAX_MEMBERS) still
 * gets 256K. */
static uint64_t
window_bytes (const struct raid_array *a)
{
  return WINDOW_BYTES / a->geo.members / COLUMN_ALIGN * COLUMN_ALIGN;
}

/* The blocks of stripe column c that recovering the blocks in gone
 * reads: the data left, and as many parity blocks as data blocks are
 * lost, P before Q (the rows parity_recover takes).  A lost P or Q is
 * encoded again from the data. */
static void
needed_blocks (const struct raid_array *a, const struct column *c,
               const struct member_set *gone, bool *need)
{
  const unsigned k = a->geo.data_members;
  unsigned blk, lost = 0;

  for (blk = 0; blk < column_blocks (a); blk++) {
    bool here = !member_set_has (gone, c->map.block_disk[blk]);

    if (blk < k) {
      need[blk] = here;
      lost += !here;
    }
    else {
      need[blk] = here && lost > 0;
      lost -= need[blk];
    }
  }
}

/* Stripe s's column within the window [lo, hi) of every member's data
 * area, its blocks at their place in bufs. */
static void
window_column (struct raid_array *a, uint64_t s, uint64_t lo, uint64_t hi,
               uint8_t *const *bufs, struct column *col)
{
  const uint64_t C = a->geo.chunk_bytes;
  uint64_t from = s * C > lo ? s * C : lo, to = min64 (hi, (s + 1) * C);
  unsigned blk;

  column_init (col, a, s, from - s * C, to - s * C);
  for (blk = 0; blk < column_blocks (a); blk++)
    col->block[blk] = bufs[col->map.block_disk[blk]] + (from - lo);
}

/* Rebuild the window [lo, hi) of every member lost in gone, in place:
 * read what each stripe's recovery needs, then recover the columns. */
static int
rebuild_window (struct raid_array *a, uint64_t lo, uint64_t hi,
                uint8_t *const *bufs, const struct member_set *gone,
                struct io_batch *b)
{
  const uint64_t C = a->geo.chunk_bytes;
  bool need[RAID_MAX_MEMBERS + 2];
  struct column col;
  uint64_t s;
  unsigned blk;

  io_batch_reset (b);
  for (s = lo / C; s <= (hi - 1) / C; s++) {
    window_column (a, s, lo, hi, bufs, &col);
    needed_blocks (a, &col, gone, need);
    for (blk = 0; blk < column_blocks (a); blk++)
      if (need[blk] &&
          io_batch_add (b, IO_READ, col.map.block_disk[blk],
                        column_offset (a, &col), col.hi - col.lo,
                        col.block[blk]))
        return -1;
  }
  if (array_run (a, b)) {
    errno = EIO;
    return -1;
  }
  for (s = lo / C; s <= (hi - 1) / C; s++) {
    window_column (a, s, lo, hi, bufs, &col);
    if (column_recover (a, &col, gone) == -1)
      return -1;
  }
  return 0;
}

int
parity_reconstruct (struct raid_array *a, unsigned m, uint64_t off,
                    uint64_t len, const struct member_set *gone,
                    uint8_t *out, struct scratch *scratch)
{
  const unsigned members = a->geo.members;
  const uint64_t lo = align_down (off);
  const uint64_t end = align_up (off + len);
  /* Whole pages: m's blocks are rebuilt straight into out. */
  const bool in_place = off == lo && off + len == end;
  uint8_t *bufs[RAID_MAX_MEMBERS + 2], *mem;
  struct io_batch b;
  uint64_t w, n;
  int r = 0;

  io_batch_init (&b);
  for (w = lo; w < end && r == 0; w += n) {
    uint64_t from = w > off ? w : off, to;

    n = min64 (window_bytes (a), end - w);
    to = min64 (w + n, off + len);
    mem = scratch_get (scratch, parity_buffers_bytes (members, n, a->direct));
    if (!mem) {
      r = -1;
      break;
    }
    parity_buffers_carve (mem, members, n, a->direct, 0, bufs);
    if (in_place)
      bufs[m] = out + (w - off);
    r = rebuild_window (a, w, w + n, bufs, gone, &b);
    if (r == 0 && !in_place)
      memcpy (out + (from - off), bufs[m] + (from - w), to - from);
  }
  io_batch_free (&b);
  return r;
}

/* Every member holds its chunk of a stripe at the same offset, so
 * member m's range is, on each member left, the same range. */
bool
parity_unwritten (struct raid_array *a, unsigned m, uint64_t off,
                  uint64_t len, const struct member_set *gone)
{
  unsigned i;

  for (i = 0; i < a->geo.members; i++)
    if (i != m && !member_set_has (gone, i) &&
        !array_member_hole (a, i, off, len))
      return false;
  return true;
}
