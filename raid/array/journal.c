/* nbdraid: the write journal's setup, replay and superblock (md's
 * raid5-cache.c r5l_load_log and r5l_recovery_log; the format is in
 * journal-format.h, the replay in journal-replay.c, writing in
 * journal-write.c). */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "array.h"
#include "journal.h"
#include "member.h"
#include "superblock-io.h"

#define BLOCK R5L_BLOCK_BYTES

/* The device number the superblocks give the journal, or max_dev. */
static uint32_t
journal_dev_number (const struct md_superblock *ref)
{
  uint32_t dev;

  for (dev = 0; dev < ref->max_dev; dev++)
    if (ref->dev_roles[dev] == MD_ROLE_JOURNAL)
      break;
  return dev;
}

/* Open the journal device; NULL with why it cannot serve. */
static struct raid_slot *
open_device (struct raid_array *a, const char *path,
             const struct md_superblock *ref, char *why, size_t whylen)
{
  struct raid_slot *s = calloc (1, sizeof *s);
  uint32_t dev = journal_dev_number (ref);
  char err[512];
  bool none;

  if (!s || !(s->path = strdup (path))) {
    free (s);
    snprintf (why, whylen, "%s", strerror (ENOMEM));
    return NULL;
  }
  if (dev == ref->max_dev) {
    snprintf (why, whylen, "the superblocks record it as failed");
    goto fail;
  }
  if (!(s->io = member_open (path, &a->member_opts, err, sizeof err))) {
    snprintf (why, whylen, "%s", err);
    goto fail;
  }
  if (md_sb_read (s->io, &s->sb, &none, err, sizeof err) == -1) {
    snprintf (why, whylen, "%s", none ? "no md superblock" : err);
    goto fail;
  }
  if (memcmp (s->sb.set_uuid, ref->set_uuid, 16) != 0 || s->sb.dev_number != dev
      || md_sb_role (&s->sb) != MD_ROLE_JOURNAL) {
    snprintf (why, whylen,
              "it is not this array's journal (device %u, "
              "role 0x%x)",
              s->sb.dev_number, md_sb_role (&s->sb));
    goto fail;
  }
  /* As a member is stale (assemble.c claim_role). */
  if (s->sb.events + 1 < ref->events) {
    snprintf (why, whylen,
              "stale: events %" PRIu64 ", the array is at %" PRIu64,
              s->sb.events, ref->events);
    goto fail;
  }
  s->data_offset_bytes = s->sb.data_offset_sectors * 512;
  s->state = SLOT_ACTIVE;
  return s;
fail:
  member_close (s->io);
  free (s->path);
  free (s);
  return NULL;
}

int
journal_open (struct raid_array *a, const struct raid_config *cfg,
              const struct md_superblock *ref, const struct raid_options *opts,
              char *err, size_t errlen)
{
  struct raid_journal *j = &a->journal;
  uint64_t min = journal_min_area_bytes (a->geo.members, a->geo.chunk_bytes);
  const char *path = cfg->journal_path ? cfg->journal_path : "(none)";
  char why[600];

  if (!md_sb_has_journal (ref))
    return 0;
  pthread_mutex_init (&j->lock, NULL);
  pthread_cond_init (&j->idle, NULL);
  pthread_cond_init (&j->logged, NULL);
  j->queue_end = &j->queue;
  j->on = true;
  j->uuid_checksum = r5l_uuid_checksum (ref->set_uuid);
  if (!cfg->journal_path)
    snprintf (why, sizeof why, "[members] names no journal device");
  else
    j->dev = open_device (a, cfg->journal_path, ref, why, sizeof why);
  if (!j->dev) {
    /* md refuses writes without its journal (raid5-cache.c
     * r5l_log_disk_error), and mdadm starts such an array only when
     * forced, then read-only (Assemble.c start_array: "Not safe to
     * assemble with missing or stale journal device"). */
    if (!opts->readonly)
      return array_refuse (err, errlen,
                           "array %s: its write journal %s is missing: %s; "
                           "md will not start an array without its journal "
                           "(mdadm: not safe to assemble with missing or "
                           "stale journal device); start it read-only "
                           "(readonly=true) to read the data",
                           a->name, path, why);
    array_log (a, RAID_LOG_WARNING,
               "array %s: write journal %s missing "
               "(%s): started read-only, as mdadm --force does",
               a->name, path, why);
    j->missing = true;
    return 0;
  }
  j->area_offset = j->dev->data_offset_bytes;
  j->area_bytes = j->dev->sb.data_size_sectors * 512 / BLOCK * BLOCK;
  if (j->area_bytes < min)
    return array_refuse (err, errlen,
                         "array %s: write journal %s: its data area of %" PRIu64
                         " bytes is below the %" PRIu64 " this "
                         "array needs (two logs of a whole stripe)",
                         a->name, path, j->area_bytes, min);
  __atomic_store_n (&j->tail, j->dev->sb.recovery_offset_sectors * 512,
                    __ATOMIC_RELEASE);
  if (cfg->journal_write_back && !opts->readonly
      && journal_cache_init (&j->cache,
                             a->geo.chunk_bytes * a->geo.data_members,
                             journal_min_area_bytes (a->geo.members,
                                                     a->geo.chunk_bytes)
                                 / 2,
                             j->area_bytes)
             == -1)
    return array_refuse (err, errlen, "array %s: write-back cache: %s",
                         a->name, strerror (errno));
  return 0;
}

void
journal_kept_free (struct raid_journal *j)
{
  struct journal_kept *kept = j->kept;
  unsigned i, n = j->nkept;

  if (!kept)
    return;
  pthread_mutex_lock (&j->lock);
  j->kept = NULL;
  j->nkept = 0;
  pthread_mutex_unlock (&j->lock);
  for (i = 0; i < n; i++)
    free (kept[i].page);
  free (kept);
}

void
journal_close (struct raid_array *a)
{
  struct raid_journal *j = &a->journal;

  if (!j->on)
    return;
  journal_cache_free (&j->cache);
  journal_kept_free (j);
  if (j->dev) {
    member_close (j->dev->io);
    free (j->dev->path);
    free (j->dev);
    j->dev = NULL;
  }
  pthread_mutex_destroy (&j->lock);
  pthread_cond_destroy (&j->idle);
  pthread_cond_destroy (&j->logged);
  j->on = false;
}

/* ---- replay at assembly ----------------------------------------- */

/* Member m, if it holds data-area bytes [off, off+len) now. */
static struct raid_slot *
usable (struct raid_array *a, unsigned m, uint64_t off, uint64_t len)
{
  struct raid_slot *s = &a->slots[m];

  if (!s->io)
    return NULL;
  if (slot_state (s) == SLOT_ACTIVE)
    return s;
  if (slot_state (s) == SLOT_RECOVERING && off + len <= slot_front (s))
    return s;
  return NULL;
}

static int
read_block (void *opaque, uint64_t pos, uint8_t *block)
{
  struct raid_array *a = opaque;
  struct member *io = a->journal.dev->io;

  return io->ops->pread (io, block, BLOCK, a->journal.area_offset + pos);
}

/* Array sector -> member byte offset of its row, and data index. */
static uint64_t
locate (const struct raid_array *a, uint64_t sector, unsigned *index)
{
  uint64_t C = a->geo.chunk_bytes, off = sector * 512;
  uint64_t stripe_bytes = C * a->geo.data_members;
  uint64_t stripe = off / stripe_bytes, in = off % stripe_bytes;

  *index = (unsigned)(in / C);
  return stripe * C + in % C;
}

static uint64_t
stripe_of (void *opaque, uint64_t sector)
{
  unsigned i;

  return locate (opaque, sector, &i) / 512;
}

/* Write a replayed page to member m at data-area offset off; a member
 * missing now is skipped (its blocks follow from the others). */
static int
put (struct raid_array *a, unsigned m, uint64_t off, const uint8_t *page,
     char *err, size_t errlen)
{
  struct raid_slot *s = usable (a, m, off, BLOCK);

  if (!s)
    return 0;
  if (s->io->ops->pwrite (s->io, page, BLOCK, s->data_offset_bytes + off)
      == -1) {
    snprintf (err, errlen,
              "array %s: member %u (%s): journal replay: "
              "pwrite at %" PRIu64 ": %s",
              a->name, m, s->path, s->data_offset_bytes + off,
              strerror (errno));
    return -1;
  }
  return 0;
}

static int
write_data (void *opaque, uint64_t sector, const uint8_t *page, char *err,
            size_t errlen)
{
  struct raid_array *a = opaque;
  struct stripe_map map;
  unsigned i;
  uint64_t off = locate (a, sector, &i);

  geometry_stripe_map (&a->geo, off / a->geo.chunk_bytes, &map);
  return put (a, map.data_disk[i], off, page, err, errlen);
}

static int
write_parity (void *opaque, uint64_t stripe, unsigned which,
              const uint8_t *page, char *err, size_t errlen)
{
  struct raid_array *a = opaque;
  struct stripe_map map;
  uint64_t off = stripe * 512;

  geometry_stripe_map (&a->geo, off / a->geo.chunk_bytes, &map);
  return put (a, which == 0 ? map.p_disk : map.q_disk, off, page, err, errlen);
}

/* A data page logged without its parity: kept for raid_start. */
static int
keep_data (void *opaque, uint64_t sector, const uint8_t *page, char *err,
           size_t errlen)
{
  struct raid_array *a = opaque;
  struct raid_journal *j = &a->journal;
  struct journal_kept *grown;
  uint8_t *copy = malloc (BLOCK);

  grown = copy ? realloc (j->kept, (j->nkept + 1) * sizeof *grown) : NULL;
  if (!grown) {
    free (copy);
    snprintf (err, errlen, "journal replay: %s", strerror (ENOMEM));
    return -1;
  }
  memcpy (copy, page, BLOCK);
  j->kept = grown;
  j->kept[j->nkept++] = (struct journal_kept){ sector, copy };
  return 0;
}

/* Write an empty meta block at ring byte pos, durably (md's
 * r5l_log_write_empty_meta_block, with FUA). */
static int
write_empty (struct raid_array *a, uint64_t pos, uint64_t seq)
{
  struct raid_journal *j = &a->journal;
  struct member *io = j->dev->io;
  uint8_t block[BLOCK];
  struct r5l_meta m;

  r5l_meta_init (&m, seq, pos / 512);
  r5l_meta_encode (&m, j->uuid_checksum, block);
  if (io->ops->pwrite (io, block, BLOCK, j->area_offset + pos) == -1
      || io->ops->flush (io) == -1)
    return -1;
  return 0;
}

/* Start the new log at ring byte pos with sequence seq: an empty meta
 * block, flushed (md's r5l_log_write_empty_meta_block). */
static int
start_empty (struct raid_array *a, uint64_t pos, uint64_t seq)
{
  struct raid_journal *j = &a->journal;

  if (write_empty (a, pos, seq) == -1)
    return -1;
  j->last_pos = pos;
  j->head = (pos + BLOCK) % j->area_bytes;
  j->seq = seq + 1;
  return 0;
}

/* Start the new log at ring byte pos with the data pages the replay
 * kept, logged again without parity (md's
 * r5c_recovery_rewrite_data_only_stripes): the tail moves there, and
 * the old log may be overwritten, before any member is written with
 * them. */
static int
log_kept (struct raid_array *a, uint64_t pos, uint64_t seq)
{
  struct raid_journal *j = &a->journal;
  struct journal_pending p = { .data_only = true };
  unsigned i;
  int r;

  /* The log is empty to the writer: nothing to reclaim before these. */
  j->head = j->last_pos = pos;
  j->seq = seq;
  __atomic_store_n (&j->tail, pos, __ATOMIC_RELEASE);
  for (i = 0; i < j->nkept; i++)
    if (journal_add_data (&p, j->kept[i].sector, j->kept[i].page) == -1) {
      journal_finish (a, &p);
      return -1;
    }
  r = journal_commit (a, &p);
  j->kept_pos = p.first_pos;
  j->kept_seq = p.first_seq;
  journal_finish (a, &p);
  return r;
}

/* Where the log starts: the tail's meta block and its sequence; false
 * when no log is there (a new journal: md's create_super). */
static bool
find_log (struct raid_array *a, uint64_t tail, uint64_t *seq)
{
  struct raid_journal *j = &a->journal;
  uint8_t block[BLOCK];
  struct r5l_meta m;
  char why[200];

  if (read_block (a, tail, block) == -1
      || r5l_meta_decode (block, j->uuid_checksum, &m, why, sizeof why) == -1
      || m.position != tail / 512)
    return false;
  *seq = m.seq;
  return true;
}

/* Flush every member in use, after the replay wrote them. */
static int
flush_members (struct raid_array *a, char *err, size_t errlen)
{
  unsigned m;

  for (m = 0; m < a->geo.members; m++) {
    struct raid_slot *s = &a->slots[m];
    if (s->io && slot_state (s) != SLOT_MISSING && slot_state (s) != SLOT_FAULTY
        && s->io->ops->flush (s->io) == -1)
      return array_refuse (err, errlen,
                           "array %s: member %u (%s): flush "
                           "after the journal replay: %s",
                           a->name, m, s->path, strerror (errno));
  }
  return 0;
}

/* A read-only start's replay writes nothing: it counts. */
static int
skip_data (void *opaque, uint64_t sector, const uint8_t *page, char *err,
           size_t errlen)
{
  return 0;
}

static int
skip_parity (void *opaque, uint64_t stripe, unsigned which,
             const uint8_t *page, char *err, size_t errlen)
{
  return 0;
}

/* A read-only start (members open read-only) cannot replay the log: if
 * it holds writes past its tail, which the members may lack, serving
 * would hand out older data than was acknowledged.  md replays at
 * assembly whatever the mode; nbdraid refuses and says how. */
static int
refuse_unreplayed (struct raid_array *a, uint64_t tail, char *err,
                   size_t errlen)
{
  static const struct journal_replay_ops ops = {
    .read_block = read_block,
    .stripe_of = stripe_of,
    .write_data = skip_data,
    .write_parity = skip_parity,
    .keep_data = skip_data,
  };
  struct journal_replay_ops o = ops;
  struct raid_journal *j = &a->journal;
  uint64_t seq;

  o.opaque = a;
  if (!find_log (a, tail, &seq))
    return 0;
  if (journal_replay (j->uuid_checksum, j->area_bytes, a->geo.parity_members,
                      tail, seq, &o, &j->replay, err, errlen)
      == -1)
    return -1;
  if (j->replay.stripes == 0 && j->replay.kept == 0)
    return 0;
  return array_refuse (err, errlen,
                       "array %s: its write journal %s holds %u stripe rows "
                       "and %u cached pages of writes the members may not "
                       "have yet, which a read-only start cannot replay: "
                       "start it writable once (without readonly=true or "
                       "nbdkit -r)",
                       a->name, j->dev->path, j->replay.stripes,
                       j->replay.kept);
}

int
journal_recover (struct raid_array *a, char *err, size_t errlen)
{
  static const struct journal_replay_ops ops = {
    .read_block = read_block,
    .stripe_of = stripe_of,
    .write_data = write_data,
    .write_parity = write_parity,
    .keep_data = keep_data,
  };
  struct journal_replay_ops o = ops;
  struct raid_journal *j = &a->journal;
  uint64_t tail = __atomic_load_n (&j->tail, __ATOMIC_ACQUIRE), seq, start;
  uint32_t fresh;

  if (!j->on || j->missing)
    return 0;
  /* md's r5l_load_log: a tail outside the ring means its start. */
  if (tail >= j->area_bytes || tail % BLOCK)
    tail = 0;
  if (a->readonly)
    return refuse_unreplayed (a, tail, err, errlen);
  o.opaque = a;
  if (find_log (a, tail, &seq)) {
    if (journal_replay (j->uuid_checksum, j->area_bytes, a->geo.parity_members,
                        tail, seq, &o, &j->replay, err, errlen)
        == -1)
      return -1;
    /* md's r5l_recovery_log: far past the log, so that a stale block
     * after it is never taken for its next. */
    start = j->replay.end_seq + R5L_SEQ_SKIP;
    tail = j->replay.end_pos;
    if (j->replay.damaged)
      array_log (a, RAID_LOG_WARNING,
                 "array %s: write journal: %u meta blocks dropped, their "
                 "pages failing their checksums (md drops them too); the "
                 "first: %s",
                 a->name, j->replay.damaged, j->replay.damage);
    if (j->replay.stripes || j->replay.kept) {
      char kept[64] = "";

      if (j->replay.kept)
        snprintf (kept, sizeof kept, ", %u pages without parity kept to write",
                  j->replay.kept);
      array_log (a, RAID_LOG_INFO,
                 "array %s: write journal replayed %u "
                 "meta blocks (%u stripe rows%s); the log ended at %s",
                 a->name, j->replay.blocks, j->replay.stripes, kept,
                 j->replay.stopped);
    }
  }
  else {
    while (getrandom (&fresh, sizeof fresh, 0) != sizeof fresh)
      ;
    start = fresh;
    tail = 0;
  }
  if (flush_members (a, err, errlen) == -1)
    return -1;
  if ((j->nkept ? log_kept (a, tail, start) : start_empty (a, tail, start))
      == -1)
    return array_refuse (err, errlen,
                         "array %s: write journal %s: "
                         "pwrite at %" PRIu64 ": %s",
                         a->name, j->dev->path, j->area_offset + tail,
                         strerror (errno));
  __atomic_store_n (&j->tail, tail, __ATOMIC_RELEASE);
  if (array_write_superblocks (a) == -1)
    return array_refuse (err, errlen,
                         "array %s: writing the superblocks "
                         "after the journal replay failed",
                         a->name);
  return 0;
}

void
journal_status (struct raid_array *a, struct raid_status *st)
{
  struct raid_journal *j = &a->journal;
  uint64_t tail;

  if (!j->on)
    return;
  st->journal_mode = j->cache.on ? "write-back" : "write-through";
  st->journal_cached_bytes = journal_cache_bytes (&j->cache);
  st->journal_cache_limit = j->cache.limit;
  st->journal_state = j->missing ? "missing"
                      : __atomic_load_n (&j->failed, __ATOMIC_ACQUIRE)
                          ? "faulty"
                          : "active";
  if (!j->dev)
    return;
  snprintf (st->journal_path, sizeof st->journal_path, "%s", j->dev->path);
  if (__atomic_load_n (&j->failed, __ATOMIC_ACQUIRE))
    snprintf (st->journal_why, sizeof st->journal_why, "%s", j->dev->why);
  st->journal_bytes = j->area_bytes;
  pthread_mutex_lock (&j->lock);
  tail = __atomic_load_n (&j->tail, __ATOMIC_ACQUIRE);
  st->journal_tail_sectors = tail / 512;
  st->journal_used_bytes
      = j->head >= tail ? j->head - tail : j->head + j->area_bytes - tail;
  pthread_mutex_unlock (&j->lock);
}

/* ---- the superblock ---------------------------------------------- */

void
journal_write_superblock (struct raid_array *a,
                          const struct md_superblock *like, uint64_t events,
                          uint64_t now)
{
  struct raid_journal *j = &a->journal;
  struct raid_slot *s = j->dev;
  struct md_superblock sb;

  if (!j->on || !s || !s->io || __atomic_load_n (&j->failed, __ATOMIC_ACQUIRE))
    return;
  /* The array's view, this device's own fields. */
  sb = *like;
  sb.dev_number = s->sb.dev_number;
  memcpy (sb.device_uuid, s->sb.device_uuid, sizeof sb.device_uuid);
  sb.devflags = 0;
  sb.data_offset_sectors = s->sb.data_offset_sectors;
  sb.data_size_sectors = s->sb.data_size_sectors;
  sb.feature_map &= ~MD_FEATURE_RECOVERY_OFFSET;
  /* md v1.2: a journal's recovery_offset is journal_tail. */
  sb.recovery_offset_sectors
      = __atomic_load_n (&j->tail, __ATOMIC_ACQUIRE) / 512;
  sb.events = events;
  sb.utime = now;
  s->sb = sb;
  if (md_sb_write (s->io, &s->sb, NULL) == -1
      || s->io->ops->flush (s->io) == -1)
    journal_fail_locked (a, "superblock write", errno);
}
