/* nbdraid: md's clean and dirty states.
 *
 * The superblocks say whether the array may have stripes in flight: the
 * first write after a quiet spell marks them dirty (resync_offset 0)
 * before it reaches a member; once writes have stopped for a while
 * (md's safemode) the members are flushed and the superblocks marked
 * clean again.  After a crash the array is dirty, and the resync covers
 * what the bitmap marks, or everything without one.
 */
#include <config.h>

#include <errno.h>
#include <time.h>

#include "array.h"
#include "bitmap.h"
#include "clock.h"

/* How long writes must have stopped before the array is marked clean
 * again (md's safemode_delay is 200 ms; a little longer here spares a
 * superblock write per burst of a bursty writer). */
#define SAFEMODE_MS 2000

uint64_t
array_resync_offset (const struct raid_array *a)
{
  uint64_t front = __atomic_load_n (&a->resync_front, __ATOMIC_ACQUIRE);

  /* With a working journal the array is never dirty: the journal's
   * replay makes the stripes in flight consistent (md's super_1_sync
   * keeps resync_offset with MD_JOURNAL_CLEAN). */
  if (!__atomic_load_n (&a->in_sync, __ATOMIC_ACQUIRE)
      && !(a->journal.on && a->journal.dev
           && !__atomic_load_n (&a->journal.failed, __ATOMIC_ACQUIRE)))
    return 0;
  if (front >= a->ops->sync_units (a))
    return MD_RESYNC_CLEAN;
  return front * a->geo.unit_bytes / 512;
}

int
array_start_write (struct raid_array *a, uint64_t first, uint64_t last)
{
  const struct timespec ms = { 0, 1000000 };

  /* Count ourselves before looking at refuse_writes, hold_writes or
   * in_sync: making the array read-only, growing it and maintenance
   * set them before they count writers, so one of us sees the other. */
  __atomic_add_fetch (&a->writes_in_flight, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n (&a->hold_writes, __ATOMIC_SEQ_CST)) {
    __atomic_sub_fetch (&a->writes_in_flight, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n (&a->hold_writes, __ATOMIC_SEQ_CST))
      nanosleep (&ms, NULL);
    __atomic_add_fetch (&a->writes_in_flight, 1, __ATOMIC_SEQ_CST);
  }
  if (__atomic_load_n (&a->refuse_writes, __ATOMIC_SEQ_CST)) {
    __atomic_sub_fetch (&a->writes_in_flight, 1, __ATOMIC_SEQ_CST);
    errno = EROFS;
    return -1;
  }
  if (__atomic_load_n (&a->in_sync, __ATOMIC_SEQ_CST)) {
    pthread_mutex_lock (&a->sb_lock);
    if (a->in_sync) {
      __atomic_store_n (&a->in_sync, 0, __ATOMIC_SEQ_CST);
      array_write_superblocks_locked (a);
    }
    pthread_mutex_unlock (&a->sb_lock);
  }
  if (bitmap_start_write (a, first, last) == -1 || array_check_alive (a)) {
    array_end_write (a, first, last);
    return -1;
  }
  return 0;
}

/* After a write begun with array_start_write: its bitmap regions start
 * to go idle, and safemode counts from now. */
void
array_end_write (struct raid_array *a, uint64_t first, uint64_t last)
{
  bitmap_end_write (a, first, last);
  __atomic_store_n (&a->last_write_ms, now_ms (), __ATOMIC_RELAXED);
  __atomic_sub_fetch (&a->writes_in_flight, 1, __ATOMIC_SEQ_CST);
}

void
array_hold_write (struct raid_array *a, uint64_t first, uint64_t last)
{
  __atomic_add_fetch (&a->writes_in_flight, 1, __ATOMIC_SEQ_CST);
  bitmap_hold (a, first, last);
}

void
array_mark_clean_when_quiet (struct raid_array *a)
{
  if (__atomic_load_n (&a->in_sync, __ATOMIC_SEQ_CST) ||
      __atomic_load_n (&a->writes_in_flight, __ATOMIC_SEQ_CST) ||
      now_ms () - __atomic_load_n (&a->last_write_ms, __ATOMIC_RELAXED)
      < SAFEMODE_MS || array_flush (a) == -1)
    return;
  pthread_mutex_lock (&a->sb_lock);
  __atomic_store_n (&a->in_sync, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n (&a->writes_in_flight, __ATOMIC_SEQ_CST))
    __atomic_store_n (&a->in_sync, 0, __ATOMIC_SEQ_CST);     /* one came */
  else
    array_write_superblocks_locked (a);
  pthread_mutex_unlock (&a->sb_lock);
}

/* As at a clean stop (md's __md_stop_writes): members flushed, bitmap
 * bits cleared (unless a member is out: it will want them), superblocks
 * marked clean.  No write may be in flight. */
void
array_mark_clean (struct raid_array *a)
{
  if (a->readonly || array_check_alive (a) == -1 || array_flush (a) == -1)
    return;
  bitmap_clear_all (a);
  pthread_mutex_lock (&a->sb_lock);
  __atomic_store_n (&a->in_sync, 1, __ATOMIC_SEQ_CST);
  array_write_superblocks_locked (a);
  pthread_mutex_unlock (&a->sb_lock);
}

/* md_set_readonly: new writes refused, those in flight waited for
 * (they end, or fail with their member's timeout), the array marked
 * clean; then nothing more is written, background work included. */
void
array_make_readonly (struct raid_array *a)
{
  const struct timespec ms = { 0, 1000000 };

  if (a->readonly)
    return;
  __atomic_store_n (&a->refuse_writes, true, __ATOMIC_SEQ_CST);
  while (__atomic_load_n (&a->writes_in_flight, __ATOMIC_SEQ_CST))
    nanosleep (&ms, NULL);
  array_mark_clean (a);
  __atomic_store_n (&a->readonly, true, __ATOMIC_SEQ_CST);
}

/* Writable again: what was paused (a resync, a rebuild) resumes. */
void
array_make_writable (struct raid_array *a)
{
  __atomic_store_n (&a->readonly, false, __ATOMIC_SEQ_CST);
  __atomic_store_n (&a->refuse_writes, false, __ATOMIC_SEQ_CST);
}

/* Writes wait before they start (their bitmap regions not yet
 * counted), and those in flight end; nbdraid grow then changes the
 * bitmap's chunks under no writer's feet. */
void
array_hold_writes (struct raid_array *a)
{
  const struct timespec ms = { 0, 1000000 };

  __atomic_store_n (&a->hold_writes, true, __ATOMIC_SEQ_CST);
  while (__atomic_load_n (&a->writes_in_flight, __ATOMIC_SEQ_CST))
    nanosleep (&ms, NULL);
}

void
array_release_writes (struct raid_array *a)
{
  __atomic_store_n (&a->hold_writes, false, __ATOMIC_SEQ_CST);
}
