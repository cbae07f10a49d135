/* nbdraid: RAID4/5/6 writes with journal-mode = write-back (md's
 * raid5-cache.c r5c_try_caching_write and the write-out of cached
 * stripes; journal-cache.h tells the whole story).
 *
 * A client write of whole pages is logged without parity and kept in
 * the cache under its stripes' locks; a stripe is destaged under its
 * lock through the write-through path, whose journal entries then
 * carry every cached page of its rows with their new parity.  Writes
 * of zeros, of partial pages or larger than a quarter of the cache go
 * through that path too, after their stripes are destaged: one path
 * writes a stripe's rows while the cache holds any of them.
 */
#include <config.h>

#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>

#include "stripe-batch.h"
#include "stripe-column.h"

#define PAGE R5L_BLOCK_BYTES

/* With stripe `stripe` locked: write its cached pages to the members
 * and forget them.  After the journal failed they go unlogged: the
 * members must hold what was acknowledged, though the hole is open
 * for those rows until then (md writes them out the same way). */
static int
destage_locked (struct raid_array *a, uint64_t stripe)
{
  struct journal_cache *c = &a->journal.cache;
  struct stripe_piece *pieces = NULL;
  struct cache_run *runs = NULL;
  unsigned n = 0, i;
  int r = -1;

  if (!journal_cache_holds (c, stripe))
    return 0;
  if (journal_cache_runs (c, stripe, &runs, &n) == -1)
    goto out;
  /* (A stripe left without pages by a put short of memory.) */
  if (n == 0) {
    journal_cache_drop (c, stripe);
    return 0;
  }
  if (!(pieces = malloc (n * sizeof *pieces)))
    goto out;
  for (i = 0; i < n; i++)
    pieces[i] = (struct stripe_piece){ runs[i].buf, runs[i].offset,
                                       runs[i].count };
  /* As many at once as the log keeps room for. */
  sem_wait (&c->slots);
  r = parity_write_locked (a, pieces, n, stripe, stripe,
                           __atomic_load_n (&a->journal.failed,
                                            __ATOMIC_ACQUIRE)
                               ? PARITY_LOG_NONE
                               : PARITY_LOG_DESTAGE);
  sem_post (&c->slots);
  if (r == 0)
    journal_cache_drop (c, stripe);
out:
  free (pieces);
  journal_cache_runs_free (runs, n);
  return r;
}

/* The destage op, from the destage thread, a writer making room or the
 * clean stop: counted as a write (the array is marked active), but for
 * the cache of a journal that failed, which is written all the same. */
int
parity_destage (struct raid_array *a, uint64_t stripe)
{
  bool counted = array_start_write (a, stripe, stripe) == 0;
  int r = -1;

  if (counted || __atomic_load_n (&a->journal.failed, __ATOMIC_ACQUIRE)) {
    stripe_lock (&a->locks, stripe, stripe, true);
    r = destage_locked (a, stripe);
    stripe_unlock (&a->locks, stripe, stripe);
  }
  if (counted)
    array_end_write (a, stripe, stripe);
  return r;
}

/* With stripes first..last locked: write the piece through, after the
 * stripes' cached pages (one path writes a stripe's rows while the cache
 * holds any of them). */
static int
write_through_locked (struct raid_array *a, const struct stripe_piece *piece,
                      uint64_t first, uint64_t last)
{
  uint64_t s;

  for (s = first; s <= last; s++)
    if (destage_locked (a, s) == -1)
      return -1;
  return parity_write_locked (a, piece, 1, first, last, PARITY_LOG_CLIENT);
}

/* Log whole pages without parity and keep them (md's data-only
 * stripe).  Should the cache be short of memory once they are logged,
 * they are written through instead: a page logged and not cached would
 * be missed by its row's next destage. */
static int
cache_write (struct raid_array *a, const struct stripe_piece *piece,
             uint64_t first, uint64_t last)
{
  struct journal_pending jp = { .data_only = true };
  uint64_t off;
  int r = -1;

  for (off = 0; off < piece->count; off += PAGE)
    if (journal_add_data (&jp, (piece->offset + off) / 512, piece->buf + off)
        == -1)
      goto out;
  if (journal_commit (a, &jp) == -1)
    goto out;
  r = journal_cache_put (&a->journal.cache, piece->buf, piece->count,
                         piece->offset, jp.first_pos, jp.first_seq);
  if (r == -1)
    r = write_through_locked (a, piece, first, last);
out:
  journal_finish (a, &jp);
  return r;
}

int
parity_write_back (struct raid_array *a, const uint8_t *buf, uint64_t count,
                   uint64_t offset)
{
  struct journal_cache *c = &a->journal.cache;
  struct stripe_piece piece = { buf, offset, count };
  uint64_t first = offset / c->stripe_bytes;
  uint64_t last = (offset + count - 1) / c->stripe_bytes;
  int r;

  /* EAGAIN: the log had no room but what it keeps for destages, the
   * cache holding its tail back: destage and try again. */
  do {
    if (journal_cache_make_room (a) == -1)
      return -1;
    stripe_lock (&a->locks, first, last, true);
    if (buf && offset % PAGE == 0 && count % PAGE == 0
        && count <= c->limit / 4)
      r = cache_write (a, &piece, first, last);
    else
      r = write_through_locked (a, &piece, first, last);
    stripe_unlock (&a->locks, first, last);
  } while (r == -1 && errno == EAGAIN
           && journal_cache_destage_oldest (a) != -1);
  return r;
}
