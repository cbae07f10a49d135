/* nbdraid: writing the partial parity log (ppl.h), md's io_units: the
 * requests that arrive while a member's log is busy gather into its
 * next log, written as one when the busy one is done. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "member.h"
#include "ppl.h"

/* One log of one member and the requests in it. */
struct ppl_group {
  struct ppl_unit unit;
  unsigned requests, finished;
  bool written;
  struct member_set flush; /* members its requests write */
};

/* Append n bytes to unit u's partial parity, growing its buffer. */
static int
unit_append (struct ppl_unit *u, const uint8_t *pp, uint64_t n)
{
  if (PPL_HEADER_BYTES + u->pp_bytes + n > u->cap) {
    uint64_t cap = u->cap ? u->cap * 2 : PPL_HEADER_BYTES + 64 * 1024;
    void *nb;

    while (cap < PPL_HEADER_BYTES + u->pp_bytes + n)
      cap *= 2;
    if (posix_memalign (&nb, 4096, cap) != 0) {
      errno = ENOMEM;
      return -1;
    }
    if (u->buf)
      memcpy (nb, u->buf, PPL_HEADER_BYTES + u->pp_bytes);
    free (u->buf);
    u->buf = nb;
    u->cap = cap;
  }
  if (n)
    memcpy (u->buf + PPL_HEADER_BYTES + u->pp_bytes, pp, n);
  u->pp_bytes += n;
  return 0;
}

int
ppl_add (struct ppl_pending *p, unsigned parity, uint32_t signature,
         uint64_t data_sector, uint32_t data_bytes, const uint8_t *pp,
         uint32_t pp_bytes)
{
  struct ppl_unit *u = p->unit[parity];
  struct ppl_entry *e;

  if (!u) {
    if (!(u = p->unit[parity] = calloc (1, sizeof *u))) {
      errno = ENOMEM;
      return -1;
    }
    u->h.signature = signature;
  }
  if (u->h.entries_count == PPL_HDR_MAX_ENTRIES) {
    errno = ENOSPC;
    return -1;
  }
  if (unit_append (u, pp, pp_bytes) == -1)
    return -1;
  e = &u->h.entries[u->h.entries_count++];
  e->data_sector = data_sector;
  e->data_size = data_bytes;
  e->pp_size = pp_bytes;
  e->parity_disk = parity;
  e->checksum = ppl_crc (pp, pp_bytes);
  return 0;
}

/* Does unit u fit into group g's log beside what it holds? */
static bool
fits (const struct raid_array *a, const struct ppl_group *g,
      const struct ppl_unit *u)
{
  return g->unit.h.entries_count + u->h.entries_count <= PPL_HDR_MAX_ENTRIES
         && PPL_HEADER_BYTES + g->unit.pp_bytes + u->pp_bytes
                <= a->ppl.area_bytes;
}

/* Write group g's log as member m's next, wrapping to the area's start
 * when it does not fit before the end.  Called by the one request that
 * took g from gathering to busy. */
static int
write_log (struct raid_array *a, unsigned m, struct ppl_group *g)
{
  struct ppl_member_log *log = &a->ppl.logs[m];
  struct member *io = a->slots[m].io;
  struct ppl_unit *u = &g->unit;
  uint64_t bytes = PPL_HEADER_BYTES + u->pp_bytes;

  if (!io) {
    errno = ENODEV;
    return -1;
  }
  /* A spare that took a role since assembly: its area may hold logs of
   * an earlier run, which a replay must not take for newer ones. */
  if (!log->ready && ppl_empty_log (a, m) == -1)
    return -1;
  if (log->next + bytes > a->ppl.area_bytes)
    log->next = 0;
  u->h.generation
      = __atomic_add_fetch (&a->ppl.generation, 1, __ATOMIC_SEQ_CST);
  ppl_header_encode (&u->h, u->buf);
  if (io->ops->pwrite (io, u->buf, bytes, a->ppl.area_offset + log->next) == -1
      || io->ops->flush (io) == -1)
    return -1;
  log->next += bytes;
  return 0;
}

/* Join member m's gathering log with unit u (and the members w its
 * writes go to); return the group once its log is written. */
static struct ppl_group *
join (struct raid_array *a, unsigned m, const struct ppl_unit *u,
      const struct member_set *w)
{
  struct ppl_member_log *log = &a->ppl.logs[m];
  struct ppl_group *g;
  unsigned i;
  bool leader = false;

  pthread_mutex_lock (&log->lock);
  while ((g = log->gathering) && !fits (a, g, u))
    pthread_cond_wait (&log->changed, &log->lock);
  if (!g) {
    if (!(g = calloc (1, sizeof *g)))
      goto nomem;
    g->unit.h.signature = u->h.signature;
    log->gathering = g;
    leader = true;
  }
  if (unit_append (&g->unit, u->buf + PPL_HEADER_BYTES, u->pp_bytes) == -1) {
    if (leader) { /* nobody else is in it yet */
      log->gathering = NULL;
      free (g->unit.buf);
      free (g);
    }
    goto nomem;
  }
  memcpy (&g->unit.h.entries[g->unit.h.entries_count], u->h.entries,
          u->h.entries_count * sizeof *u->h.entries);
  g->unit.h.entries_count += u->h.entries_count;
  for (i = 0; i < sizeof w->bits / sizeof w->bits[0]; i++)
    g->flush.bits[i] |= w->bits[i];
  g->requests++;
  if (leader) {
    /* The others join while the busy log finishes. */
    while (log->busy)
      pthread_cond_wait (&log->changed, &log->lock);
    log->busy = g;
    log->gathering = NULL;
    pthread_mutex_unlock (&log->lock);
    if (write_log (a, m, g) == -1) {
      char why[300];

      snprintf (why, sizeof why, "writing its partial parity log: %s",
                strerror (errno));
      array_log (a, RAID_LOG_ERROR, "array %s: member %u (%s): %s", a->name, m,
                 a->slots[m].path, why);
      array_fail_member (a, m, why);
    }
    pthread_mutex_lock (&log->lock);
    g->written = true;
    pthread_cond_broadcast (&log->changed);
  }
  while (!g->written)
    pthread_cond_wait (&log->changed, &log->lock);
  pthread_mutex_unlock (&log->lock);
  return g;

nomem:
  /* A request that cannot log must not write: it fails whole. */
  pthread_mutex_unlock (&log->lock);
  errno = ENOMEM;
  return NULL;
}

int
ppl_commit (struct raid_array *a, struct ppl_pending *p)
{
  unsigned m;

  for (m = 0; m < a->geo.members; m++)
    if (p->unit[m] && !(p->group[m] = join (a, m, p->unit[m], &p->written)))
      return -1;
  return 0;
}

/* Leave member m's busy log g; the last request out flushes what they
 * all wrote and lets the next log go. */
static void
leave (struct raid_array *a, unsigned m, struct ppl_group *g)
{
  struct ppl_member_log *log = &a->ppl.logs[m];
  unsigned d;

  pthread_mutex_lock (&log->lock);
  if (++g->finished < g->requests) {
    pthread_mutex_unlock (&log->lock);
    return;
  }
  pthread_mutex_unlock (&log->lock);
  for (d = 0; d < a->geo.members; d++) {
    struct member *io = a->slots[d].io;

    if (member_set_has (&g->flush, d) && io
        && slot_state (&a->slots[d]) != SLOT_FAULTY
        && io->ops->flush (io) == -1)
      array_log (a, RAID_LOG_WARNING,
                 "array %s: member %u (%s): flush "
                 "after partial parity logged writes: %s",
                 a->name, d, io->name, strerror (errno));
  }
  pthread_mutex_lock (&log->lock);
  log->busy = NULL;
  pthread_cond_broadcast (&log->changed);
  pthread_mutex_unlock (&log->lock);
  free (g->unit.buf);
  free (g);
}

void
ppl_finish (struct raid_array *a, struct ppl_pending *p)
{
  unsigned m;

  for (m = 0; m < a->geo.members; m++) {
    if (p->group[m])
      leave (a, m, p->group[m]);
    if (p->unit[m]) {
      free (p->unit[m]->buf);
      free (p->unit[m]);
    }
  }
  memset (p, 0, sizeof *p);
}
