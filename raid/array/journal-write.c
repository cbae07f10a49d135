/* nbdraid: logging stripe updates in the write journal before the
 * members see them (md's raid5-cache.c r5l_write_stripe and
 * r5l_log_stripe, write-through). */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "journal.h"
#include "member.h"

#define BLOCK R5L_BLOCK_BYTES

static int
add (struct journal_pending *p, const struct journal_entry *e)
{
  if (p->n == p->cap) {
    unsigned cap = p->cap ? 2 * p->cap : 64;
    struct journal_entry *grown = realloc (p->e, cap * sizeof *grown);
    if (!grown) {
      errno = ENOMEM;
      return -1;
    }
    p->e = grown;
    p->cap = cap;
  }
  p->e[p->n++] = *e;
  return 0;
}

int
journal_add_data (struct journal_pending *p, uint64_t sector,
                  const uint8_t *page)
{
  struct journal_entry e = { .type = R5L_PAYLOAD_DATA,
                             .pages = 1,
                             .location = sector,
                             .page = { page, NULL } };
  return add (p, &e);
}

int
journal_add_parity (struct journal_pending *p, uint64_t stripe,
                    unsigned parities, const uint8_t *pp, const uint8_t *q)
{
  struct journal_entry e = { .type = R5L_PAYLOAD_PARITY,
                             .pages = parities,
                             .location = stripe,
                             .page = { pp, q } };
  return add (p, &e);
}

uint64_t
journal_row_bytes (unsigned data, unsigned parities)
{
  /* Its pages, and a meta block of its own at worst. */
  return ((uint64_t)data + parities + 1) * BLOCK;
}

static uint64_t
ring_add (const struct raid_journal *j, uint64_t pos, uint64_t bytes)
{
  return (pos + bytes) % j->area_bytes;
}

static uint64_t
ring_used (const struct raid_journal *j)
{
  uint64_t tail = __atomic_load_n (&j->tail, __ATOMIC_ACQUIRE);

  return j->head >= tail ? j->head - tail : j->head + j->area_bytes - tail;
}

/* With sb_lock held. */
void
journal_fail_locked (struct raid_array *a, const char *what, int error)
{
  struct raid_journal *j = &a->journal;
  uint32_t dev = j->dev->sb.dev_number;
  unsigned i;

  if (__atomic_exchange_n (&j->failed, true, __ATOMIC_SEQ_CST))
    return;
  /* md: with its journal faulty the array takes no more writes
   * (raid5-cache.c r5l_log_disk_error): it is read-only. */
  __atomic_store_n (&a->refuse_writes, true, __ATOMIC_SEQ_CST);
  j->dev->state = SLOT_FAULTY;
  snprintf (j->dev->why, sizeof j->dev->why, "%s: %s", what, strerror (error));
  for (i = 0; i < a->geo.members; i++)
    if (dev < a->slots[i].sb.max_dev)
      a->slots[i].sb.dev_roles[dev] = MD_ROLE_FAULTY;
  for (i = 0; i < a->nspares; i++)
    if (dev < a->spares[i].sb.max_dev)
      a->spares[i].sb.dev_roles[dev] = MD_ROLE_FAULTY;
  array_log (a, RAID_LOG_ERROR,
             "array %s: write journal %s failed: %s: "
             "%s; the array is read-only now (md refuses writes without its "
             "journal)",
             a->name, j->dev->path, what, strerror (error));
  array_event (a, RAID_EVENT_FAIL, -1, "journal");
}

static void
journal_fail (struct raid_array *a, const char *what, int error)
{
  pthread_mutex_lock (&a->sb_lock);
  journal_fail_locked (a, what, error);
  array_write_superblocks_locked (a);
  pthread_mutex_unlock (&a->sb_lock);
}

/* Write len bytes at ring byte pos, wrapping at the ring's end. */
static int
ring_write (const struct raid_journal *j, const uint8_t *buf, uint64_t len,
            uint64_t pos)
{
  struct member *io = j->dev->io;
  uint64_t first = len < j->area_bytes - pos ? len : j->area_bytes - pos;

  if (io->ops->pwrite (io, buf, first, j->area_offset + pos) == -1)
    return -1;
  if (first < len
      && io->ops->pwrite (io, buf + first, len - first, j->area_offset) == -1)
    return -1;
  return 0;
}

/* Bytes of meta block the payloads of entries [from, to) take. */
static uint32_t
row_meta_bytes (const struct journal_pending *p, unsigned from, unsigned to)
{
  uint32_t n = 0;

  for (; from < to; from++)
    n += r5l_payload_bytes (p->e[from].pages);
  return n;
}

/* Encode entries [from, to) as one meta block (built in m) at ring
 * byte pos with sequence seq, its pages after it, into buf; the bytes
 * it takes. */
static uint64_t
fill_unit (const struct raid_journal *j, const struct journal_pending *p,
           unsigned from, unsigned to, uint64_t pos, uint64_t seq,
           struct r5l_meta *m, uint8_t *buf)
{
  uint64_t off = BLOCK;
  unsigned i, k;

  r5l_meta_init (m, seq, pos / 512);
  for (i = from; i < to; i++) {
    const struct journal_entry *e = &p->e[i];
    uint32_t sums[2];

    for (k = 0; k < e->pages; k++, off += BLOCK) {
      memcpy (buf + off, e->page[k], BLOCK);
      sums[k] = r5l_page_checksum (j->uuid_checksum, buf + off);
    }
    if ((e->type == R5L_PAYLOAD_DATA
             ? r5l_meta_add_data (m, e->location, sums[0])
             : r5l_meta_add_parity (m, e->location, e->pages, sums))
        == -1)
      abort (); /* write_units sized the unit */
  }
  r5l_meta_encode (m, j->uuid_checksum, buf);
  return off;
}

/* Where the tail may move: the latest meta block; with a write-back
 * cache the block its oldest page was logged in (md's
 * r5c_calculate_new_cp); nowhere while the replay's kept data is being
 * written, whose log starts at the tail (journal.c log_kept). */
static uint64_t
reclaim_target (struct raid_journal *j)
{
  uint64_t pos, seq;

  if (j->nkept)
    return __atomic_load_n (&j->tail, __ATOMIC_ACQUIRE);
  return journal_cache_oldest (&j->cache, &pos, &seq) ? pos : j->last_pos;
}

/* Ring bytes from the tail to pos. */
static uint64_t
from_tail (const struct raid_journal *j, uint64_t pos)
{
  uint64_t tail = __atomic_load_n (&j->tail, __ATOMIC_ACQUIRE);

  return pos >= tail ? pos - tail : pos + j->area_bytes - tail;
}

/* With the lock held: wait for the logged writes, flush the members,
 * move the tail as far as it may go and record it. */
static int
checkpoint_locked (struct raid_array *a)
{
  struct raid_journal *j = &a->journal;
  uint64_t target;

  while (j->in_flight)
    pthread_cond_wait (&j->idle, &j->lock);
  target = reclaim_target (j);
  if (__atomic_load_n (&j->tail, __ATOMIC_ACQUIRE) == target)
    return 0;
  if (array_flush (a) == -1)
    return -1;
  __atomic_store_n (&j->tail, target, __ATOMIC_RELEASE);
  return array_write_superblocks (a);
}

int
journal_stop (struct raid_array *a)
{
  struct raid_journal *j = &a->journal;
  uint8_t block[BLOCK];
  struct r5l_meta m;
  int r;

  if (!j->on || !j->dev || j->missing || a->readonly)
    return 0;
  r = journal_cache_drain (a);
  if (__atomic_load_n (&j->failed, __ATOMIC_ACQUIRE))
    return r;
  pthread_mutex_lock (&j->lock);
  while (j->writing)
    pthread_cond_wait (&j->logged, &j->lock);
  /* As a batch's writer: no other may start while this waits. */
  j->writing = true;
  if (r == 0)
    r = checkpoint_locked (a);
  /* A new empty block for the tail, so that the next start has nothing
   * to write again. */
  if (r == 0 && __atomic_load_n (&j->tail, __ATOMIC_ACQUIRE) == j->last_pos
      && j->last_pos != (j->head + j->area_bytes - BLOCK) % j->area_bytes) {
    r5l_meta_init (&m, j->seq, j->head / 512);
    r5l_meta_encode (&m, j->uuid_checksum, block);
    if (ring_write (j, block, BLOCK, j->head) == 0
        && j->dev->io->ops->flush (j->dev->io) == 0) {
      j->last_pos = j->head;
      j->head = ring_add (j, j->head, BLOCK);
      j->seq++;
      __atomic_store_n (&j->tail, j->last_pos, __ATOMIC_RELEASE);
      r = array_write_superblocks (a);
    }
  }
  j->writing = false;
  pthread_cond_broadcast (&j->logged);
  pthread_mutex_unlock (&j->lock);
  return r;
}

/* Whether entry i ends a row: a parity entry, or any data page of a
 * data-only request (md's write-back logs pages without parity). */
static bool
row_end (const struct journal_pending *p, unsigned i)
{
  return p->data_only || p->e[i].type == R5L_PAYLOAD_PARITY;
}

/* The ring bytes p's rows take, unit by unit as write_units cuts them. */
static uint64_t
pending_bytes (const struct journal_pending *p)
{
  uint32_t meta = R5L_META_HEADER_BYTES, row;
  uint64_t bytes = BLOCK;
  unsigned i, start = 0;

  for (i = 0; i < p->n; i++) {
    bytes += (uint64_t)p->e[i].pages * BLOCK;
    if (!row_end (p, i))
      continue;
    row = row_meta_bytes (p, start, i + 1);
    if (meta + row > BLOCK) {
      bytes += BLOCK;
      meta = R5L_META_HEADER_BYTES;
    }
    meta += row;
    start = i + 1;
  }
  return bytes;
}

/* Build p's rows as meta blocks and pages into buf, from ring byte pos
 * on with sequence *seq: as many whole rows a meta block as fit (md
 * reserves a stripe's payloads in one block, r5l_get_meta).  Sets
 * *last to the offset in buf of the last meta block and advances
 * *seq; returns the bytes built, p->bytes. */
static uint64_t
build_units (const struct raid_journal *j, const struct journal_pending *p,
             uint64_t pos, uint64_t *seq, uint64_t *last, struct r5l_meta *m,
             uint8_t *buf)
{
  uint32_t meta = R5L_META_HEADER_BYTES, row;
  uint64_t off = 0;
  unsigned i, start = 0, unit = 0;

  for (i = 0; i < p->n; i++) {
    if (!row_end (p, i))
      continue;
    row = row_meta_bytes (p, start, i + 1);
    if (meta + row > BLOCK) {
      *last = off;
      off += fill_unit (j, p, unit, start, ring_add (j, pos, off), (*seq)++, m,
                        buf + off);
      unit = start;
      meta = R5L_META_HEADER_BYTES;
    }
    meta += row;
    start = i + 1;
  }
  *last = off;
  off += fill_unit (j, p, unit, p->n, ring_add (j, pos, off), (*seq)++, m,
                    buf + off);
  if (off != p->bytes)
    abort (); /* pending_bytes and this cut the units alike */
  return off;
}

/* Log the batch at the head, the lock released (j->writing keeps the
 * head and sequence from moving): every request's units are built in
 * one buffer first and go out in one write and one flush.  Nothing is
 * logged when memory is short: rows logged without their member writes
 * would be replayed over a later write's parity of the same stripe.
 * 0 with the ring offset of the last meta block in *last_pos and the
 * next sequence number in *next_seq, or -1 with errno. */
static int
write_batch (const struct raid_journal *j, struct journal_pending *batch,
             uint64_t bytes, uint64_t *last_pos, uint64_t *next_seq)
{
  uint64_t off = 0, last = 0, seq = j->seq;
  struct r5l_meta *m = malloc (sizeof *m);
  uint8_t *buf = malloc (bytes);
  struct journal_pending *p;
  int r = -1;

  if (!m || !buf) {
    errno = ENOMEM;
    goto out;
  }
  for (p = batch; p; p = p->next) {
    uint64_t at = off;

    p->first_pos = ring_add (j, j->head, off);
    p->first_seq = seq;
    off += build_units (j, p, ring_add (j, j->head, off), &seq, &last, m,
                        buf + off);
    last += at;
  }
  if (ring_write (j, buf, bytes, j->head) == 0
      && j->dev->io->ops->flush (j->dev->io) == 0) {
    *last_pos = ring_add (j, j->head, last);
    *next_seq = seq;
    r = 0;
  }
out:
  free (buf);
  free (m);
  return r;
}

/* End every request of the list with error (0: logged). */
static void
end_requests (struct raid_journal *j, struct journal_pending *list, int error)
{
  for (; list; list = list->next) {
    list->done = true;
    list->error = error;
    if (!error) {
      list->committed = true;
      j->in_flight++;
    }
  }
}

/* The room a write-back cache keeps in the ring for its destages
 * (journal-cache.c sizes the cache by it); none without a cache. */
static uint64_t
kept_room (const struct raid_journal *j)
{
  return j->cache.on ? j->area_bytes / 4 : 0;
}

/* With the lock held and no batch being written: take the requests
 * queued first, as many as half the ring holds (an eighth with a
 * write-back cache; one at least, and a destage alone), make room for
 * them and log them.  Client writes may not use the room kept for
 * destages while the cache holds the tail back: EAGAIN, for the writer
 * to destage and try again. */
static void
lead (struct raid_array *a)
{
  struct raid_journal *j = &a->journal;
  struct journal_pending *batch = j->queue, **end = &j->queue;
  uint64_t bytes = 0, last_pos = 0, next_seq = 0, pos, seq;
  uint64_t most = (j->cache.on ? j->area_bytes / 8 : j->area_bytes / 2) - BLOCK;
  bool destage = batch->destage;
  int error = 0;

  while (*end && (*end)->destage == destage
         && (bytes == 0 || bytes + (*end)->bytes <= most)) {
    bytes += (*end)->bytes;
    end = &(*end)->next;
    if (destage)
      break;
  }
  j->queue = *end;
  if (!j->queue)
    j->queue_end = &j->queue;
  *end = NULL;
  j->writing = true;
  if (__atomic_load_n (&j->failed, __ATOMIC_ACQUIRE) || !j->dev)
    error = EROFS;
  /* md's reclaim: when the log holds more than a quarter of the ring
   * (max_free_space) and an eighth would be freed (a write-back cache
   * may hold the tail back), or when this would not fit. */
  else if (((ring_used (j) > j->area_bytes / 4
             && from_tail (j, reclaim_target (j)) >= j->area_bytes / 8)
            || ring_used (j) + bytes + kept_room (j) >= j->area_bytes)
           && checkpoint_locked (a) == -1)
    error = errno ? errno : EIO;
  else if (!destage && ring_used (j) + bytes + kept_room (j) >= j->area_bytes
           && journal_cache_oldest (&j->cache, &pos, &seq))
    error = EAGAIN;
  else if (ring_used (j) + bytes >= j->area_bytes) {
    array_log (a, RAID_LOG_ERROR,
               "array %s: a write's log of %" PRIu64
               " bytes does not fit the write journal's %" PRIu64,
               a->name, bytes, j->area_bytes);
    error = ENOSPC;
  }
  else {
    pthread_mutex_unlock (&j->lock);
    if (write_batch (j, batch, bytes, &last_pos, &next_seq) == -1)
      error = errno;
    pthread_mutex_lock (&j->lock);
    if (!error) {
      j->last_pos = last_pos;
      j->head = ring_add (j, j->head, bytes);
      j->seq = next_seq;
    }
    /* Memory short is no fault of the device: the batch fails alone,
     * having logged nothing. */
    if (error && error != ENOMEM) {
      journal_fail (a, "log write", error);
      error = EIO;
    }
  }
  end_requests (j, batch, error);
  j->writing = false;
  pthread_cond_broadcast (&j->logged);
}

int
journal_commit (struct raid_array *a, struct journal_pending *p)
{
  struct raid_journal *j = &a->journal;

  if (!j->on || p->n == 0)
    return 0;
  p->bytes = pending_bytes (p);
  p->next = NULL;
  p->done = false;
  pthread_mutex_lock (&j->lock);
  *j->queue_end = p;
  j->queue_end = &p->next;
  while (!p->done) {
    if (j->writing)
      pthread_cond_wait (&j->logged, &j->lock);
    else
      lead (a);
  }
  pthread_mutex_unlock (&j->lock);
  if (p->error) {
    errno = p->error;
    return -1;
  }
  return 0;
}

void
journal_finish (struct raid_array *a, struct journal_pending *p)
{
  struct raid_journal *j = &a->journal;

  if (p->committed) {
    pthread_mutex_lock (&j->lock);
    if (--j->in_flight == 0)
      pthread_cond_broadcast (&j->idle);
    pthread_mutex_unlock (&j->lock);
  }
  free (p->e);
  memset (p, 0, sizeof *p);
}
