/* nbdraid: the partial parity log's setup and replay (md's
 * raid5-ppl.c; the format is in ppl-format.h, writing in
 * ppl-write.c). */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "member.h"
#include "ppl.h"

#define BLOCK 4096

int
ppl_open (struct raid_array *a, const struct md_superblock *ref)
{
  struct raid_ppl *l = &a->ppl;
  unsigned i;

  if (!md_sb_has_ppl (ref))
    return 0;
  l->signature = ppl_signature (ref->set_uuid);
  l->area_offset = (ref->super_offset_sectors + md_sb_ppl_offset (ref)) * 512;
  l->area_bytes = (uint64_t)md_sb_ppl_size (ref) * 512;
  l->nlogs = RAID_MAX_MEMBERS;
  if (!(l->logs = calloc (l->nlogs, sizeof *l->logs))) {
    errno = ENOMEM;
    return -1;
  }
  for (i = 0; i < l->nlogs; i++) {
    pthread_mutex_init (&l->logs[i].lock, NULL);
    pthread_cond_init (&l->logs[i].changed, NULL);
  }
  l->on = true;
  return 0;
}

void
ppl_close (struct raid_array *a)
{
  unsigned i;

  for (i = 0; a->ppl.logs && i < a->ppl.nlogs; i++) {
    pthread_mutex_destroy (&a->ppl.logs[i].lock);
    pthread_cond_destroy (&a->ppl.logs[i].changed);
  }
  free (a->ppl.logs);
  a->ppl.logs = NULL;
  a->ppl.on = false;
}

/* Member m, if it holds data-area bytes [off, off+len) now. */
static struct member *
usable (struct raid_array *a, unsigned m, uint64_t off, uint64_t len)
{
  struct raid_slot *s = &a->slots[m];

  if (!s->io)
    return NULL;
  if (slot_state (s) == SLOT_ACTIVE)
    return s->io;
  if (slot_state (s) == SLOT_RECOVERING && off + len <= slot_front (s))
    return s->io;
  return NULL;
}

static void
xor_into (uint8_t *dst, const uint8_t *src, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    dst[i] ^= src[i];
}

/* The rows an entry covers (md's ppl_recover_entry): from array sector
 * *first, *strip sectors down each of *data_disks chunks, ending before
 * array sector *last.  False, with why, for an entry no write of this
 * array makes: torn shapes, outside the array, or another member's
 * stripe. */
static bool
entry_rows (const struct raid_array *a, unsigned log_m,
            const struct ppl_entry *e, uint64_t *first, uint64_t *last,
            uint64_t *strip, uint64_t *data_disks, char *why, size_t len)
{
  const struct raid_geometry *g = &a->geo;
  uint64_t chunk_s = g->chunk_bytes / 512;
  uint64_t stripe_s = chunk_s * g->data_members;
  struct stripe_map map;

  *first = e->data_sector;
  if (e->data_size == 0 || e->data_size % BLOCK || e->pp_size % BLOCK
      || e->data_size < e->pp_size || *first % (BLOCK / 512)) {
    snprintf (why, len, "data_size %" PRIu32 " and pp_size %" PRIu32,
              e->data_size, e->pp_size);
    return false;
  }
  if (e->pp_size && e->pp_size / 512 < chunk_s) {
    *data_disks = e->data_size / e->pp_size;
    *strip = e->pp_size / 512;
    *last = *first + (*data_disks - 1) * chunk_s + *strip;
  }
  else {
    *data_disks = g->data_members;
    *strip = e->pp_size ? chunk_s : e->data_size / 512 / *data_disks;
    *last = e->pp_size ? *first + e->data_size / 512
                       : *first + (*data_disks - 1) * chunk_s + *strip;
  }
  if (*data_disks > g->data_members || *strip == 0
      || *first % chunk_s + *strip > chunk_s
      || *first >= g->array_bytes / 512) {
    snprintf (why, len,
              "rows outside one stripe of the array (data_size "
              "%" PRIu32 ", pp_size %" PRIu32 ")",
              e->data_size, e->pp_size);
    return false;
  }
  geometry_stripe_map (g, *first / stripe_s, &map);
  if (map.p_disk != e->parity_disk || map.p_disk != log_m) {
    snprintf (why, len, "parity member %" PRIu32 ", but the stripe's is %u",
              e->parity_disk, map.p_disk);
    return false;
  }
  return true;
}

/* Replay one entry (md's ppl_recover_entry): for each 4 KiB row it
 * covers, parity = the written data as it is now ^ the partial parity
 * logged at pp_at on member log_m.  A row whose written data cannot
 * all be read is left alone, as md leaves it.  1 if replayed, 0 if
 * skipped (logged), -1 on I/O error (err set). */
static int
replay_entry (struct raid_array *a, unsigned log_m, const struct ppl_entry *e,
              uint64_t pp_at, char *err, size_t errlen)
{
  const struct raid_geometry *g = &a->geo;
  uint64_t chunk_s = g->chunk_bytes / 512, first, last;
  uint64_t strip, row, d, data_disks;
  uint8_t acc[BLOCK], blk[BLOCK];
  char why[160];

  if (!entry_rows (a, log_m, e, &first, &last, &strip, &data_disks, why,
                   sizeof why)) {
    array_log (a, RAID_LOG_WARNING,
               "array %s: member %u: PPL entry for array sector %" PRIu64
               " has %s, which no write makes; skipped",
               a->name, log_m, e->data_sector, why);
    return 0;
  }
  for (row = 0; row < strip; row += BLOCK / 512) {
    uint64_t off = (first + row) * 512,
             stripe_bytes = g->chunk_bytes * g->data_members;
    uint64_t stripe = off / stripe_bytes,
             moff = stripe * g->chunk_bytes + off % g->chunk_bytes;
    struct stripe_map map;
    struct member *pm;
    bool update = true;

    geometry_stripe_map (g, stripe, &map);
    memset (acc, 0, sizeof acc);
    for (d = 0; d < data_disks && update; d++) {
      uint64_t r = first + row + d * chunk_s, roff = r * 512;
      struct member *m;
      unsigned disk;

      if (r >= last)
        continue;
      disk = map.data_disk[(roff % stripe_bytes) / g->chunk_bytes];
      if (roff / stripe_bytes != stripe
          || !(m = usable (a, disk, moff, BLOCK))) {
        update = false;
        break;
      }
      if (m->ops->pread (m, blk, BLOCK, a->slots[disk].data_offset_bytes + moff)
          == -1) {
        snprintf (err, errlen, "member %u (%s): pread at %" PRIu64 ": %s", disk,
                  m->name, a->slots[disk].data_offset_bytes + moff,
                  strerror (errno));
        return -1;
      }
      xor_into (acc, blk, BLOCK);
    }
    if (!update)
      continue;
    pm = a->slots[log_m].io;
    if (e->pp_size) {
      if (pm->ops->pread (pm, blk, BLOCK, pp_at + row * 512) == -1) {
        snprintf (err, errlen, "member %u (%s): PPL pread at %" PRIu64 ": %s",
                  log_m, pm->name, pp_at + row * 512, strerror (errno));
        return -1;
      }
      xor_into (acc, blk, BLOCK);
    }
    if (pm->ops->pwrite (pm, acc, BLOCK,
                         a->slots[log_m].data_offset_bytes + moff)
        == -1) {
      snprintf (err, errlen, "member %u (%s): pwrite at %" PRIu64 ": %s", log_m,
                pm->name, a->slots[log_m].data_offset_bytes + moff,
                strerror (errno));
      return -1;
    }
  }
  return 1;
}

/* Find member m's latest log (md's ppl_load_distributed: follow the
 * chain from the area's start while generations grow).  Returns 1 with
 * *h and *at (the header's member offset) set, 0 if there is none. */
static int
latest_log (struct raid_array *a, unsigned m, struct ppl_header *h,
            uint64_t *at)
{
  struct member *io = a->slots[m].io;
  uint64_t off = 0;
  struct ppl_header cur;
  uint8_t block[PPL_HEADER_BYTES];
  char why[160];
  int found = 0;

  while (off + PPL_HEADER_BYTES <= a->ppl.area_bytes) {
    if (io->ops->pread (io, block, sizeof block, a->ppl.area_offset + off) == -1
        || ppl_header_decode (block, a->ppl.signature, &cur, why, sizeof why)
               == -1
        || (found && cur.generation < h->generation))
      break;
    *h = cur;
    *at = a->ppl.area_offset + off;
    found = 1;
    off += PPL_HEADER_BYTES + ppl_header_pp_bytes (&cur);
  }
  return found;
}

/* Replay member m's latest log. */
static int
replay_member (struct raid_array *a, unsigned m, char *err, size_t errlen)
{
  struct member *io = a->slots[m].io;
  struct ppl_header *h = malloc (sizeof *h);
  uint64_t at = 0, pp_at;
  uint8_t *pp = NULL;
  uint32_t i;
  int r = -1, done;

  if (!h)
    return array_refuse (err, errlen, "%s", strerror (ENOMEM));
  if (!latest_log (a, m, h, &at)) {
    r = 0;
    goto out;
  }
  pp_at = at + PPL_HEADER_BYTES;
  for (i = 0; i < h->entries_count; i++) {
    const struct ppl_entry *e = &h->entries[i];

    free (pp);
    if (!(pp = malloc (e->pp_size ? e->pp_size : 1)))
      goto out;
    if (pp_at + e->pp_size > a->ppl.area_offset + a->ppl.area_bytes
        || io->ops->pread (io, pp, e->pp_size, pp_at) == -1
        || ppl_crc (pp, e->pp_size) != e->checksum) {
      array_log (a, RAID_LOG_WARNING,
                 "array %s: member %u (%s): PPL entry "
                 "%u of generation %" PRIu64 " (array sector %" PRIu64
                 ") has a bad checksum or cannot be read; skipped, as md "
                 "skips it",
                 a->name, m, io->name, i, h->generation, e->data_sector);
      a->ppl.skipped++;
    }
    else if ((done = replay_entry (a, m, e, pp_at, err, errlen)) == -1)
      goto out;
    else if (done)
      a->ppl.replayed++;
    else
      a->ppl.skipped++;
    pp_at += e->pp_size;
  }
  r = 0;
out:
  free (pp);
  free (h);
  return r;
}

int
ppl_empty_log (struct raid_array *a, unsigned m)
{
  struct member *io = a->slots[m].io;
  struct ppl_header h = { .signature = a->ppl.signature };
  uint8_t block[PPL_HEADER_BYTES];

  ppl_header_encode (&h, block);
  if (io->ops->zero (io, a->ppl.area_bytes - PPL_HEADER_BYTES,
                     a->ppl.area_offset + PPL_HEADER_BYTES)
          == -1
      || io->ops->pwrite (io, block, sizeof block, a->ppl.area_offset) == -1)
    return -1;
  a->ppl.logs[m].next = 0;
  a->ppl.logs[m].ready = true;
  return 0;
}

void
ppl_member_joins (struct raid_array *a, unsigned m)
{
  struct member *io = a->slots[m].io;

  if (!a->ppl.on || !io)
    return;
  a->ppl.logs[m].ready = false;
  if (ppl_empty_log (a, m) == -1 || io->ops->flush (io) == -1) {
    a->ppl.logs[m].ready = false;
    array_log (a, RAID_LOG_WARNING, "array %s: member %u (%s): emptying its "
               "partial parity log: %s", a->name, m, io->name,
               strerror (errno));
  }
}

int
ppl_recover (struct raid_array *a, bool dirty, char *err, size_t errlen)
{
  unsigned m;

  if (!a->ppl.on)
    return 0;
  for (m = 0; dirty && m < a->geo.members; m++)
    if (usable (a, m, 0, 0) && replay_member (a, m, err, errlen) == -1)
      return -1;
  /* The parity replayed is on the members before the logs go.  A
   * member that cannot take the writes is failed, as any write error
   * fails it. */
  for (m = 0; m < a->geo.members; m++) {
    struct member *io = usable (a, m, 0, 0);
    char why[300];

    if (!io
        || (io->ops->flush (io) == 0 && ppl_empty_log (a, m) == 0
            && io->ops->flush (io) == 0))
      continue;
    snprintf (why, sizeof why, "emptying its partial parity log: %s",
              strerror (errno));
    array_log (a, RAID_LOG_ERROR, "array %s: member %u (%s): %s", a->name,
               m, io->name, why);
    array_fail_member (a, m, why);
  }
  if (array_check_alive (a) == -1)
    return array_refuse (err, errlen, "array %s: too many members failed "
                         "while the partial parity logs were emptied",
                         a->name);
  if (dirty)
    array_log (a, RAID_LOG_INFO,
               "array %s: partial parity logs replayed: "
               "%u entries, %u skipped",
               a->name, a->ppl.replayed, a->ppl.skipped);
  return 0;
}
