/* nbdraid: stripe columns: buffers, reads and reconstruction. */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "stripe-column.h"

/* Column [lo, hi) of stripe `stripe`: its stripe map, no buffers yet. */
void
column_init (struct column *c, const struct raid_array *a, uint64_t stripe,
             uint64_t lo, uint64_t hi)
{
  c->stripe = stripe;
  c->lo = lo;
  c->hi = hi;
  c->skew = 0;
  c->mem = NULL;
  memset (c->block, 0, sizeof c->block);
  geometry_stripe_map (&a->geo, stripe, &c->map);
}

int
column_alloc (struct column *c, const struct raid_array *a, const bool *want)
{
  uint8_t *bufs[RAID_MAX_MEMBERS + 2];
  unsigned b, n = 0, i = 0;

  for (b = 0; b < column_blocks (a); b++)
    n += want[b];
  if (n == 0)
    return 0;
  c->mem = parity_buffers_alloc (n, c->hi - c->lo, a->direct, c->skew, bufs);
  if (!c->mem)
    return -1;
  for (b = 0; b < column_blocks (a); b++)
    c->block[b] = want[b] ? bufs[i++] : NULL;
  return 0;
}

/* Free the column's buffers; column_alloc may give it new ones. */
void
column_free (struct column *c)
{
  parity_buffers_free (c->mem);
  c->mem = NULL;
  memset (c->block, 0, sizeof c->block);
}

int
column_add_reads (const struct raid_array *a, const struct column *c,
                  const struct member_set *gone, struct io_batch *b)
{
  unsigned blk;

  for (blk = 0; blk < column_blocks (a); blk++) {
    unsigned disk = c->map.block_disk[blk];
    if (c->block[blk] && !member_set_has (gone, disk) &&
        io_batch_add (b, IO_READ, disk, column_offset (a, c),
                      c->hi - c->lo, c->block[blk]))
      return -1;
  }
  return 0;
}

void
column_encode (struct raid_array *a, struct column *c)
{
  unsigned k = a->geo.data_members;

  parity_encode (&parity_state (a)->code, c->hi - c->lo, c->block,
                 c->block + k);
}

int
column_recover (struct raid_array *a, struct column *c,
                const struct member_set *gone)
{
  unsigned k = a->geo.data_members, b;
  bool present[RAID_MAX_MEMBERS + 2] = { false }, parity_gone = false;

  for (b = 0; b < column_blocks (a); b++) {
    present[b] = !member_set_has (gone, c->map.block_disk[b]);
    if (!present[b] && !c->block[b] && b < k) {
      errno = EINVAL;           /* a missing data block needs a buffer */
      return -1;
    }
    parity_gone |= b >= k && !present[b] && c->block[b];
  }
  if (parity_recover (&parity_state (a)->code, c->hi - c->lo, present,
                      c->block) == -1)
    return -1;
  if (parity_gone) {
    for (b = 0; b < column_blocks (a); b++)
      if (!c->block[b]) {
        errno = EINVAL;         /* encoding needs every block */
        return -1;
      }
    column_encode (a, c);
  }
  return 0;
}
