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
ring_write (struct raid_journal *j, const uint8_t *buf, uint64_t len,
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

/* With the lock held: wait for the logged writes, flush the members,
 * move the tail to the latest meta block and record it. */
static int
checkpoint_locked (struct raid_array *a)
{
  struct raid_journal *j = &a->journal;

  while (j->in_flight)
    pthread_cond_wait (&j->idle, &j->lock);
  if (__atomic_load_n (&j->tail, __ATOMIC_ACQUIRE) == j->last_pos)
    return 0;
  if (array_flush (a) == -1)
    return -1;
  __atomic_store_n (&j->tail, j->last_pos, __ATOMIC_RELEASE);
  return array_write_superblocks (a);
}

int
journal_checkpoint (struct raid_array *a)
{
  struct raid_journal *j = &a->journal;
  int r;

  if (!j->on || !j->dev || j->missing
      || __atomic_load_n (&j->failed, __ATOMIC_ACQUIRE) || a->readonly)
    return 0;
  pthread_mutex_lock (&j->lock);
  r = checkpoint_locked (a);
  pthread_mutex_unlock (&j->lock);
  return r;
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
    if (p->e[i].type != R5L_PAYLOAD_PARITY)
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

/* Log p's rows at the head: as many whole rows a meta block as fit
 * (md reserves a stripe's payloads in one block, r5l_get_meta).  The
 * units are built in one buffer first and go out in one write, so that
 * nothing is logged when memory is short: a log of rows no member
 * write follows would be replayed over later writes' parity.  `bytes`
 * is pending_bytes (p). */
static int
write_units (struct raid_journal *j, const struct journal_pending *p,
             uint64_t bytes)
{
  uint32_t meta = R5L_META_HEADER_BYTES, row;
  uint64_t off = 0, last = 0, seq = j->seq;
  unsigned i, start = 0, unit = 0;
  struct r5l_meta *m = malloc (sizeof *m);
  uint8_t *buf = malloc (bytes);
  int r = -1;

  if (!m || !buf) {
    errno = ENOMEM;
    goto out;
  }
  for (i = 0; i < p->n; i++) {
    if (p->e[i].type != R5L_PAYLOAD_PARITY)
      continue;
    row = row_meta_bytes (p, start, i + 1);
    if (meta + row > BLOCK) {
      last = off;
      off += fill_unit (j, p, unit, start, ring_add (j, j->head, off), seq++, m,
                        buf + off);
      unit = start;
      meta = R5L_META_HEADER_BYTES;
    }
    meta += row;
    start = i + 1;
  }
  last = off;
  off += fill_unit (j, p, unit, p->n, ring_add (j, j->head, off), seq++, m,
                    buf + off);
  if (off != bytes)
    abort (); /* pending_bytes and this cut the units alike */
  if (ring_write (j, buf, bytes, j->head) == 0) {
    j->last_pos = ring_add (j, j->head, last);
    j->head = ring_add (j, j->head, bytes);
    j->seq = seq;
    r = 0;
  }
out:
  free (buf);
  free (m);
  return r;
}

int
journal_commit (struct raid_array *a, struct journal_pending *p)
{
  struct raid_journal *j = &a->journal;
  uint64_t need;
  int r = -1, error = 0;

  if (!j->on || p->n == 0)
    return 0;
  need = pending_bytes (p);
  pthread_mutex_lock (&j->lock);
  if (__atomic_load_n (&j->failed, __ATOMIC_ACQUIRE) || !j->dev) {
    errno = EROFS;
    goto out;
  }
  /* md's reclaim: when the log holds more than a quarter of the ring
   * (max_free_space), or this would not fit. */
  if ((ring_used (j) > j->area_bytes / 4
       || ring_used (j) + need >= j->area_bytes)
      && checkpoint_locked (a) == -1)
    goto out;
  if (ring_used (j) + need >= j->area_bytes) {
    array_log (a, RAID_LOG_ERROR,
               "array %s: a write's log of %" PRIu64
               " bytes does not fit the write journal's %" PRIu64,
               a->name, need, j->area_bytes);
    errno = ENOSPC;
    goto out;
  }
  if (write_units (j, p, need) == -1
      || j->dev->io->ops->flush (j->dev->io) == -1) {
    /* Memory short is no fault of the device: the write fails alone,
     * having logged nothing. */
    if (errno != ENOMEM)
      error = errno;
    goto out;
  }
  j->in_flight++;
  p->committed = true;
  r = 0;
out:
  pthread_mutex_unlock (&j->lock);
  if (error) {
    journal_fail (a, "log write", error);
    errno = EIO;
  }
  return r;
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
