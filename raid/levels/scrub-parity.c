/* nbdraid: check and repair of parity stripes (RAID5, RAID6).
 *
 * Every block of a stripe is read, P (and Q) recomputed from the data,
 * and each 4K page compared with what is stored, as md counts
 * mismatch_cnt.  Where a RAID6 page disagrees, the two syndromes say
 * which one member holds the wrong bytes (parity_culprit, as md's
 * raid6check): repair restores that member's bytes, a data block's from
 * the syndrome, P's or Q's by recomputing them.  Where no one member
 * explains it (two are wrong), and on RAID5, where parity alone cannot
 * tell, repair does what md's does: parity recomputed from the data.
 *
 * A RAID6 array that lost one member still has a syndrome to compare:
 * its check reconstructs what is lost and finds the pages that disagree,
 * but cannot say where (repair is refused while it is degraded).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stripe-column.h"

/* Whether one page agrees, and if not, which block is wrong: with
 * locate, from the syndromes (a wrong data block put right in col);
 * without, PARITY_UNLOCATED. */
static int
judge_page (struct raid_array *a, struct column *col, uint8_t *const *stored,
            uint64_t page, bool locate)
{
  const unsigned k = a->geo.data_members;
  uint8_t *p2 = col->block[k] + page;
  unsigned blk;
  size_t i;
  int who;

  if (!locate) {
    for (blk = 0; blk < a->geo.parity_members; blk++)
      if (memcmp (stored[blk] + page, col->block[k + blk] + page,
                  COLUMN_ALIGN))
        return PARITY_UNLOCATED;
    return PARITY_AGREE;
  }
  who = parity_culprit (&parity_state (a)->code, COLUMN_ALIGN,
                        stored[0] + page, stored[1] + page, p2,
                        col->block[k + 1] + page);
  if (who >= 0 && who < (int) k) {
    /* Data block `who`, off by e, gave P' = P ^ e: put it right. */
    uint8_t *d = col->block[who] + page;

    for (i = 0; i < COLUMN_ALIGN; i++)
      d[i] ^= stored[0][page + i] ^ p2[i];
  }
  return who;
}

/* Add the writes repairing a page to b: the one wrong block, or, when
 * none could be named, P and Q recomputed from the data (md's repair). */
static int
add_repair (struct raid_array *a, const struct column *col, int who,
            uint64_t page, struct io_batch *b)
{
  const unsigned k = a->geo.data_members, p = a->geo.parity_members;
  const uint64_t off = column_offset (a, col) + page;
  unsigned blk;

  if (who >= 0)
    return io_batch_add (b, IO_WRITE, col->map.block_disk[who], off,
                         COLUMN_ALIGN, col->block[who] + page);
  for (blk = k; blk < k + p; blk++)
    if (io_batch_add (b, IO_WRITE, col->map.block_disk[blk], off,
                      COLUMN_ALIGN, col->block[blk] + page) == -1)
      return -1;
  return 0;
}

/* Check one stripe whose blocks col has read (those of members in gone
 * reconstructed); with repair, write what puts it right. */
static int
check_stripe (struct raid_array *a, struct column *col, uint8_t *const *stored,
              const struct member_set *gone, bool repair,
              uint64_t *mismatches, struct io_batch *b)
{
  const unsigned k = a->geo.data_members;
  const bool locate = a->geo.parity_members == 2 &&
    member_set_count (gone) == 0;
  uint64_t page;
  unsigned blk;
  int who;

  /* Stored parity aside, as read; then what is lost reconstructed and
   * parity recomputed from the data.  A lost P or Q has nothing stored
   * to compare: it is taken as computed. */
  for (blk = 0; blk < a->geo.parity_members; blk++)
    memcpy (stored[blk], col->block[k + blk], a->geo.chunk_bytes);
  if (member_set_count (gone) && column_recover (a, col, gone) == -1)
    return -1;
  column_encode (a, col);
  for (blk = 0; blk < a->geo.parity_members; blk++)
    if (member_set_has (gone, col->map.block_disk[k + blk]))
      memcpy (stored[blk], col->block[k + blk], a->geo.chunk_bytes);
  io_batch_reset (b);
  for (page = 0; page < a->geo.chunk_bytes; page += COLUMN_ALIGN) {
    who = judge_page (a, col, stored, page, locate);
    if (who == PARITY_AGREE)
      continue;
    *mismatches += COLUMN_ALIGN / 512;
    array_note_mismatch (a, col->stripe, who < 0 ? -1
                         : (int) col->map.block_disk[who], NULL,
                         COLUMN_ALIGN / 512);
    if (repair && add_repair (a, col, who, page, b) == -1)
      return -1;
  }
  if (b->n == 0)
    return 0;
  array_run (a, b);
  return array_settle_writes (a, b);
}

int
parity_check (struct raid_array *a, uint64_t first, uint64_t n, bool repair,
              uint64_t *mismatches)
{
  const unsigned k = a->geo.data_members, p = a->geo.parity_members;
  const uint64_t C = a->geo.chunk_bytes;
  bool want[RAID_MAX_MEMBERS + 2];
  struct member_set gone;
  struct column col;
  struct io_batch b;
  uint8_t *stored[2], *mem = NULL;
  uint64_t s;
  unsigned blk;
  int r = 0;

  for (blk = 0; blk < k + p; blk++)
    want[blk] = true;
  mem = parity_buffers_alloc (p, C, a->direct, 0, stored);
  if (!mem) {
    errno = ENOMEM;
    return -1;
  }
  io_batch_init (&b);
  array_unavailable (a, &gone);
  for (s = first; s < first + n && r == 0; s++) {
    column_init (&col, a, s, 0, C);
    io_batch_reset (&b);
    stripe_lock (&a->locks, s, s, true);
    if (stripe_in_holes (a, s))
      ;
    else if (column_alloc (&col, a, want) ||
             column_add_reads (a, &col, &gone, &b))
      r = -1;
    else if (array_run (a, &b)) {
      errno = EIO;
      r = -1;
    }
    else
      r = check_stripe (a, &col, stored, &gone, repair, mismatches, &b);
    stripe_unlock (&a->locks, s, s);
    column_free (&col);
  }
  io_batch_free (&b);
  parity_buffers_free (mem);
  return r;
}
