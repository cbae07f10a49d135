/* nbdraid: keeping md's write-intent bitmap. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "bitmap-format.h"
#include "clock.h"

/* The bits, after the header in the image. */
static uint8_t *
bits (const struct raid_bitmap *b)
{
  return b->image + MD_BITMAP_HEADER_BYTES;
}

/* Is chunk c's bit set in the image? */
static bool
test_bit (const struct raid_bitmap *b, uint64_t c)
{
  return bits (b)[c / 8] >> (c % 8) & 1;
}

/* Set or clear chunk c's bit in the image; the disk follows later. */
static void
set_bit (struct raid_bitmap *b, uint64_t c, bool on)
{
  if (on)
    bits (b)[c / 8] |= (uint8_t) (1 << (c % 8));
  else
    bits (b)[c / 8] &= (uint8_t) ~(1 << (c % 8));
}

/* The bitmap chunk holding sync unit `unit`. */
static uint64_t
chunk_of (const struct raid_array *a, uint64_t unit)
{
  return unit * a->geo.unit_bytes / a->bitmap.chunk_bytes;
}

/* Where a device's bitmap starts: bitmap_offset sectors after its
 * superblock (md v1.2). */
static uint64_t
bitmap_start (const struct raid_slot *s)
{
  return s->sb.super_offset_sectors * 512 +
    (int64_t) s->sb.bitmap_offset_sectors * 512;
}

/* A device with data to keep: open, and active or being rebuilt. */
static bool
in_use (const struct raid_slot *s)
{
  return s->io && (slot_state (s) == SLOT_ACTIVE ||
                   slot_state (s) == SLOT_RECOVERING);
}

/* Read and check the reference member's bitmap; on any doubt, not
 * trusted (the array then resyncs in full when it is not clean, and md
 * sees a bitmap older than the superblocks and does the same). */
static int
read_bitmap (struct raid_array *a, struct raid_slot *s, char *why,
             size_t len)
{
  struct raid_bitmap *b = &a->bitmap;
  struct md_bitmap_header h;
  uint64_t sync_bytes = geometry_sync_bytes (&a->geo);
  uint64_t start = bitmap_start (s), room;
  uint8_t block[4096];
  unsigned i;

  if (s->io->ops->pread (s->io, block, sizeof block, start) == -1) {
    snprintf (why, len, "pread at %" PRIu64 ": %s", start, strerror (errno));
    return -1;
  }
  if (md_bitmap_decode (block, &h, why, len) == -1)
    return -1;
  if (memcmp (h.uuid, s->sb.set_uuid, 16) != 0) {
    snprintf (why, len, "its UUID is not the array's");
    return -1;
  }
  if (h.events < s->sb.events) {
    snprintf (why, len, "it is out of date (events %" PRIu64 " < %" PRIu64
              ")", h.events, s->sb.events);
    return -1;
  }
  if (md_bitmap_check (&h, sync_bytes, why, len) == -1)
    return -1;
  b->chunks = md_bitmap_chunks (sync_bytes, h.chunk_bytes);
  b->disk_bytes = md_bitmap_disk_bytes (b->chunks);
  /* Every device gets the bitmap at its own offset: it must fit before
   * each one's data (md_sb_check saw to it that the header does). */
  for (i = 0; i < a->geo.members + a->nspares; i++) {
    const struct raid_slot *d = array_slot (a, i);
    if (!d->io || !(d->sb.feature_map & MD_FEATURE_BITMAP))
      continue;
    room = d->data_offset_bytes - bitmap_start (d);
    if (b->disk_bytes > room) {
      snprintf (why, len, "%" PRIu64 " bits of %u bytes need %" PRIu64
                " bytes, the space before the data on %s holds %" PRIu64,
                b->chunks, h.chunk_bytes, b->disk_bytes, d->path, room);
      return -1;
    }
  }
  b->chunk_bytes = h.chunk_bytes;
  b->daemon_sleep_s = h.daemon_sleep_s ? h.daemon_sleep_s : 5;
  b->write_behind = h.write_behind;
  b->events_cleared = h.events_cleared;
  if (posix_memalign ((void **) &b->image, 4096, b->disk_bytes) != 0 ||
      posix_memalign ((void **) &b->scratch, 4096, b->disk_bytes) != 0)
    return -2;
  if (s->io->ops->pread (s->io, b->image, b->disk_bytes, start) == -1) {
    snprintf (why, len, "pread at %" PRIu64 ": %s", start, strerror (errno));
    return -1;
  }
  return 0;
}

int
bitmap_load (struct raid_array *a)
{
  struct raid_bitmap *b = &a->bitmap;
  struct raid_slot *s = array_reference (a);
  char why[256];
  int r;

  pthread_mutex_init (&b->lock, NULL);
  pthread_mutex_init (&b->io_lock, NULL);
  pthread_cond_init (&b->written_cond, NULL);
  if (!(s->sb.feature_map & MD_FEATURE_BITMAP))
    return 0;
  r = read_bitmap (a, s, why, sizeof why);
  if (r == -2) {
    errno = ENOMEM;
    return -1;
  }
  if (r == -1) {
    array_log (a, RAID_LOG_ERROR, "array %s: the bitmap on %s is not "
               "usable: %s; not trusting it (a full resync if the array was "
               "not stopped cleanly)", a->name, s->path, why);
    free (b->image);
    free (b->scratch);
    b->image = b->scratch = NULL;
    return 0;
  }
  b->pending = calloc (b->chunks, sizeof *b->pending);
  b->idle_since_ms = calloc (b->chunks, sizeof *b->idle_since_ms);
  if (!b->pending || !b->idle_since_ms) {
    errno = ENOMEM;
    return -1;
  }
  b->present = true;
  return 0;
}

/* Free what bitmap_load set up. */
void
bitmap_free (struct raid_bitmap *b)
{
  if (b->pending || b->image || b->present) {
    pthread_mutex_destroy (&b->lock);
    pthread_mutex_destroy (&b->io_lock);
    pthread_cond_destroy (&b->written_cond);
  }
  free (b->image);
  free (b->scratch);
  free (b->pending);
  free (b->idle_since_ms);
}

/* The header of the image, with the events of the superblocks. */
static void
refresh_header (struct raid_array *a, uint64_t events)
{
  struct raid_bitmap *b = &a->bitmap;
  const struct md_superblock *sb = &array_reference (a)->sb;
  struct md_bitmap_header h = {
    .events = events, .events_cleared = b->events_cleared,
    .sync_size_sectors = geometry_sync_bytes (&a->geo) / 512,
    .chunk_bytes = (uint32_t) b->chunk_bytes,
    .daemon_sleep_s = b->daemon_sleep_s, .write_behind = b->write_behind,
  };

  memcpy (h.uuid, sb->set_uuid, 16);
  md_bitmap_encode (&h, b->image);
}

/* The newest events of the superblocks held, a superblock write in
 * progress included (write_one sets them before it writes the bitmap
 * header): a bitmap never goes on disk older than a superblock, which
 * md and bitmap_load take for stale. */
static uint64_t
newest_events (struct raid_array *a)
{
  uint64_t e = 0;
  unsigned i;

  for (i = 0; i < a->geo.members + a->nspares; i++) {
    const struct raid_slot *s = array_slot (a, i);
    uint64_t se = __atomic_load_n (&s->sb.events, __ATOMIC_ACQUIRE);
    if (s->io && se > e)
      e = se;
  }
  return e;
}

/* Write a snapshot of the image to every device in use and flush it.
 * With the lock held; releases it meanwhile.  The snapshot is taken
 * under io_lock, so that a header written meanwhile for a superblock
 * (bitmap_write_header) never lands before an older image, nor an older
 * image after it. */
static int
write_locked (struct raid_array *a)
{
  struct raid_bitmap *b = &a->bitmap;
  struct io_batch batch;
  unsigned i;
  int r = 0;

  pthread_mutex_unlock (&b->lock);
  pthread_mutex_lock (&b->io_lock);
  pthread_mutex_lock (&b->lock);
  refresh_header (a, newest_events (a));
  memcpy (b->scratch, b->image, b->disk_bytes);
  pthread_mutex_unlock (&b->lock);
  io_batch_init (&batch);
  for (i = 0; i < a->geo.members + a->nspares && r == 0; i++) {
    struct raid_slot *s = array_slot (a, i);
    if (in_use (s) || (i >= a->geo.members && s->io &&
                       slot_state (s) == SLOT_ACTIVE))
      r = io_batch_add_metadata (&batch, i, bitmap_start (s), b->disk_bytes,
                                 b->scratch) ||
        io_batch_add (&batch, IO_FLUSH, i, 0, 0, NULL);
  }
  if (r == 0)
    array_run (a, &batch);
  /* Failing a member takes sb_lock, which is taken before io_lock. */
  pthread_mutex_unlock (&b->io_lock);
  if (r == 0)
    r = array_settle_writes (a, &batch);
  io_batch_free (&batch);
  pthread_mutex_lock (&b->lock);
  return r;
}

/* Bring the disk up to generation `want`, writing it ourselves unless a
 * writer is at it (then the next write covers us too). */
static int
flush_to (struct raid_array *a, uint64_t want)
{
  struct raid_bitmap *b = &a->bitmap;
  int r = 0;

  while (b->written < want && r == 0) {
    if (b->flushing) {
      pthread_cond_wait (&b->written_cond, &b->lock);
      continue;
    }
    uint64_t target = b->wanted;
    b->flushing = true;
    r = write_locked (a);
    b->flushing = false;
    if (r == 0)
      b->written = target;
    pthread_cond_broadcast (&b->written_cond);
  }
  return r;
}

int
bitmap_write_header (struct raid_array *a, struct raid_slot *s,
                     uint64_t events)
{
  struct raid_bitmap *b = &a->bitmap;
  uint8_t *block;
  int r;

  if (!b->present)
    return 0;
  if (posix_memalign ((void **) &block, 4096, 4096) != 0) {
    errno = ENOMEM;
    return -1;
  }
  pthread_mutex_lock (&b->io_lock);
  pthread_mutex_lock (&b->lock);
  refresh_header (a, events);
  memcpy (block, b->image, 4096);
  pthread_mutex_unlock (&b->lock);
  r = s->io->ops->pwrite (s->io, block, 4096, bitmap_start (s));
  pthread_mutex_unlock (&b->io_lock);
  free (block);
  return r;
}

int
bitmap_write (struct raid_array *a)
{
  struct raid_bitmap *b = &a->bitmap;
  int r;

  if (!b->present)
    return 0;
  pthread_mutex_lock (&b->lock);
  r = flush_to (a, ++b->wanted);
  pthread_mutex_unlock (&b->lock);
  return r;
}

int
bitmap_start_write (struct raid_array *a, uint64_t first, uint64_t last)
{
  struct raid_bitmap *b = &a->bitmap;
  uint64_t c, c0, c1;
  bool newly_dirty = false;
  int r = 0;

  if (!b->present)
    return 0;
  c0 = chunk_of (a, first);
  c1 = chunk_of (a, last);
  pthread_mutex_lock (&b->lock);
  for (c = c0; c <= c1 && c < b->chunks; c++) {
    b->pending[c]++;
    if (!test_bit (b, c)) {
      set_bit (b, c, true);
      newly_dirty = true;
    }
  }
  if (newly_dirty)
    b->set_gen = ++b->wanted;
  /* A bit found set may be on its way to the disk for another writer:
   * wait for it too (nothing to wait for in the common case). */
  r = flush_to (a, b->set_gen);
  pthread_mutex_unlock (&b->lock);
  return r;
}

void
bitmap_end_write (struct raid_array *a, uint64_t first, uint64_t last)
{
  struct raid_bitmap *b = &a->bitmap;
  uint64_t c, now = now_ms ();

  if (!b->present)
    return;
  pthread_mutex_lock (&b->lock);
  for (c = chunk_of (a, first); c <= chunk_of (a, last) && c < b->chunks;
       c++) {
    b->pending[c]--;
    b->idle_since_ms[c] = now;
  }
  pthread_mutex_unlock (&b->lock);
}

void
bitmap_hold (struct raid_array *a, uint64_t first, uint64_t last)
{
  struct raid_bitmap *b = &a->bitmap;
  uint64_t c;

  if (!b->present)
    return;
  pthread_mutex_lock (&b->lock);
  for (c = chunk_of (a, first); c <= chunk_of (a, last) && c < b->chunks;
       c++)
    b->pending[c]++;
  pthread_mutex_unlock (&b->lock);
}

bool
bitmap_dirty (struct raid_array *a, uint64_t u)
{
  struct raid_bitmap *b = &a->bitmap;
  bool dirty;

  if (!b->present)
    return true;
  pthread_mutex_lock (&b->lock);
  dirty = test_bit (b, chunk_of (a, u));
  pthread_mutex_unlock (&b->lock);
  return dirty;
}

uint64_t
bitmap_count_dirty (struct raid_array *a)
{
  struct raid_bitmap *b = &a->bitmap;
  uint64_t c, n = 0;

  if (!b->present)
    return 0;
  pthread_mutex_lock (&b->lock);
  for (c = 0; c < b->chunks; c++)
    n += test_bit (b, c);
  pthread_mutex_unlock (&b->lock);
  return n;
}

/* Is a role not active?  Bits stay set then: a member that returns
 * needs every region written meanwhile. */
static bool
any_role_out (const struct raid_array *a)
{
  unsigned m;

  for (m = 0; m < a->geo.members; m++)
    if (slot_state (&a->slots[m]) != SLOT_ACTIVE)
      return true;
  return false;
}

/* A set bit with no write in flight, quiet since `quiet` ms before
 * `now` (a write ending after `now` is not yet covered by the flush
 * that goes before clearing). */
static bool
idle (const struct raid_bitmap *b, uint64_t c, bool all, uint64_t now,
      uint64_t quiet)
{
  return test_bit (b, c) && b->pending[c] == 0 &&
    (all || b->idle_since_ms[c] + quiet <= now);
}

/* Clear the bits of chunks that are idle (and, with all set, every
 * chunk the resync has passed).  Members are flushed first, so what a
 * cleared bit covered is on disk. */
static void
clear_idle (struct raid_array *a, bool all)
{
  struct raid_bitmap *b = &a->bitmap;
  uint64_t now = now_ms (), c, synced, events;
  uint64_t quiet = (uint64_t) b->daemon_sleep_s * 1000;
  bool candidates = false, cleared = false;

  if (!b->present || any_role_out (a))
    return;
  /* Chunks the resync has passed whole; all of them, the last one
   * (which the array may end inside) too, once it is done. */
  synced = __atomic_load_n (&a->resync_front, __ATOMIC_ACQUIRE);
  synced = synced >= a->ops->sync_units (a) ? b->chunks
    : synced * a->geo.unit_bytes / b->chunk_bytes;
  pthread_mutex_lock (&b->lock);
  for (c = 0; c < synced && c < b->chunks && !candidates; c++)
    candidates = idle (b, c, all, now, quiet);
  pthread_mutex_unlock (&b->lock);
  /* The events every member had before the flush: one that fails in
   * it or after is re-added from the bits set since (md's
   * events_cleared); and none is cleared if one failed in the flush,
   * whose writes it may not hold. */
  events = array_reference (a)->sb.events;
  if (!candidates || array_flush (a) == -1 || any_role_out (a))
    return;
  pthread_mutex_lock (&b->lock);
  for (c = 0; c < synced && c < b->chunks; c++)
    if (idle (b, c, all, now, quiet)) {
      set_bit (b, c, false);
      cleared = true;
    }
  if (cleared) {
    b->events_cleared = events;
    flush_to (a, ++b->wanted);
  }
  pthread_mutex_unlock (&b->lock);
}

void
bitmap_sweep (struct raid_array *a)
{
  clear_idle (a, false);
}

void
bitmap_clear_all (struct raid_array *a)
{
  clear_idle (a, true);
}

/* The fewest bytes before the data of any device that holds a bitmap:
 * every one holds all of it. */
static uint64_t
bitmap_room (struct raid_array *a)
{
  uint64_t room = UINT64_MAX, r;
  unsigned i;

  for (i = 0; i < a->geo.members + a->nspares; i++) {
    const struct raid_slot *d = array_slot (a, i);
    if (!d->io || !(d->sb.feature_map & MD_FEATURE_BITMAP))
      continue;
    r = d->data_offset_bytes - bitmap_start (d);
    if (r < room)
      room = r;
  }
  return room;
}

uint64_t
bitmap_resize_chunk (struct raid_array *a, uint64_t sync_bytes)
{
  uint64_t chunk = a->bitmap.chunk_bytes, room = bitmap_room (a);

  /* md-bitmap.c md_bitmap_resize(): chunkshift++ until it fits. */
  while (md_bitmap_disk_bytes (md_bitmap_chunks (sync_bytes, chunk)) > room)
    if ((chunk *= 2) > (1U << 31))
      return 0;
  return chunk;
}

int
bitmap_resize (struct raid_array *a, uint64_t old_end, char *err,
               size_t errlen)
{
  struct raid_bitmap *b = &a->bitmap;
  uint64_t sync_bytes = geometry_sync_bytes (&a->geo);
  uint64_t chunk, chunks, disk, c, nc;
  uint8_t *image = NULL, *scratch = NULL, *nbits;
  uint16_t *pending = NULL;
  uint64_t *idle = NULL;

  if (!b->present)
    return 0;
  chunk = bitmap_resize_chunk (a, sync_bytes);
  if (chunk == 0) {
    snprintf (err, errlen, "the bitmap cannot cover %" PRIu64 " bytes in "
              "the space before the data", sync_bytes);
    return -1;
  }
  chunks = md_bitmap_chunks (sync_bytes, chunk);
  disk = md_bitmap_disk_bytes (chunks);
  if (posix_memalign ((void **) &image, 4096, disk) != 0 ||
      posix_memalign ((void **) &scratch, 4096, disk) != 0 ||
      !(pending = calloc (chunks, sizeof *pending)) ||
      !(idle = calloc (chunks, sizeof *idle))) {
    free (image);
    free (scratch);
    free (pending);
    snprintf (err, errlen, "%s", strerror (ENOMEM));
    return -1;
  }
  memset (image, 0, disk);
  nbits = image + MD_BITMAP_HEADER_BYTES;
  pthread_mutex_lock (&b->lock);
  /* (Fewer chunks after a shrink: the bits past the end go.) */
  for (c = 0; c < b->chunks; c++)
    if (test_bit (b, c) && (nc = c * b->chunk_bytes / chunk) < chunks)
      nbits[nc / 8] |= (uint8_t) (1 << (nc % 8));
  for (nc = old_end / chunk; nc < chunks; nc++)
    nbits[nc / 8] |= (uint8_t) (1 << (nc % 8));
  if (chunk != b->chunk_bytes)
    array_log (a, RAID_LOG_INFO, "array %s: bitmap chunk %" PRIu64 " -> %"
               PRIu64 " bytes: %" PRIu64 " bits must fit in the space "
               "before the data", a->name, b->chunk_bytes, chunk, chunks);
  free (b->image);
  free (b->scratch);
  free (b->pending);
  free (b->idle_since_ms);
  b->image = image;
  b->scratch = scratch;
  b->pending = pending;
  b->idle_since_ms = idle;
  b->chunk_bytes = chunk;
  b->chunks = chunks;
  b->disk_bytes = disk;
  pthread_mutex_unlock (&b->lock);
  return 0;
}
