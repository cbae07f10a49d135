/* nbdraid: the write-intent bitmap at run time.
 *
 * md's rules: a region's bit is on disk, on every member, before the
 * first write into it reaches a member; bits are cleared only once the
 * region has been idle for the daemon-sleep interval and the members
 * have been flushed, and never while the array is degraded (a member
 * that returns then needs only the set regions).  A region already
 * dirty costs no bitmap I/O at all; writers that dirty regions at the
 * same time share one bitmap write per member.
 */
#ifndef NBDRAID_BITMAP_H
#define NBDRAID_BITMAP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct raid_array;
struct raid_slot;

struct raid_bitmap {
  bool present;                 /* the array has one, and we trust it */
  uint64_t chunk_bytes;         /* sync-space bytes per bit */
  uint64_t chunks;
  uint32_t daemon_sleep_s;
  uint32_t write_behind;        /* the header's: md's write-behind limit */
  uint64_t disk_bytes;          /* header + bits, 4 KiB multiple */
  uint64_t events_cleared;
  uint8_t *image;               /* what the members should hold */
  uint8_t *scratch;             /* the copy being written */
  uint16_t *pending;            /* writes in flight per chunk */
  uint64_t *idle_since_ms;      /* when its last write ended */
  pthread_mutex_t lock;
  /* Held around each write of the bitmap to the members, taken before
   * lock (and after the array's sb_lock): a header written for a
   * superblock and a whole image never cross. */
  pthread_mutex_t io_lock;
  pthread_cond_t written_cond;
  bool flushing;
  uint64_t wanted, written;     /* image generations */
  uint64_t set_gen;             /* the generation holding the last bit set */
};

/* At assembly: load the bitmap of the reference member.  A bitmap that
 * fails validation is reported and replaced by one with every bit set
 * (a full resync if one is needed).  0, or -1 (ENOMEM). */
int bitmap_load (struct raid_array *a);
void bitmap_free (struct raid_bitmap *b);

/* Around a write of sync units first..last: the first makes the bits
 * durable (returns -1 if the array failed meanwhile), the second notes
 * the regions idle. */
int bitmap_start_write (struct raid_array *a, uint64_t first, uint64_t last);
void bitmap_end_write (struct raid_array *a, uint64_t first, uint64_t last);
/* One more write on regions a write in flight has already made dirty
 * on disk (no I/O); bitmap_end_write ends it. */
void bitmap_hold (struct raid_array *a, uint64_t first, uint64_t last);

/* Whether sync unit u's region may be out of sync (its bit is set). */
bool bitmap_dirty (struct raid_array *a, uint64_t u);
/* Clear the bits of regions idle long enough (members flushed first),
 * unless the array is degraded or a resync has not reached them. */
void bitmap_sweep (struct raid_array *a);
/* Clean stop of a whole array: every bit cleared (after a flush). */
void bitmap_clear_all (struct raid_array *a);
/* Write the image (with the current events) to every member in use. */
int bitmap_write (struct raid_array *a);
/* Write the block holding the header to one device, with these events
 * (kept with its superblock, so md never sees a bitmap older than it). */
int bitmap_write_header (struct raid_array *a, struct raid_slot *s,
                         uint64_t events);
/* nbdraid grow, with writes held and the array quiesced, the geometry
 * already the new one: cover sync bytes up to geometry_sync_bytes, the
 * chunk doubled until the bits fit before every device's data (md's
 * md_bitmap_resize); an old bit set sets the new bit over it, and every
 * chunk reaching past old_end (where the resync of the new space
 * starts) is set, to be resynced.  Memory only; bitmap_write puts it on disk.  0, or -1
 * with the reason in err (nothing changed). */
int bitmap_resize (struct raid_array *a, uint64_t old_end, char *err,
                   size_t errlen);
/* The chunk size bitmap_resize would choose for sync_bytes, or 0 if
 * no chunk small enough for md's 32-bit field fits. */
uint64_t bitmap_resize_chunk (struct raid_array *a, uint64_t sync_bytes);
/* Count of set bits. */
uint64_t bitmap_count_dirty (struct raid_array *a);

#endif
