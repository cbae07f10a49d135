/* nbdraid: recovery onto a spare, and replacement of a member, in
 * windows of the target's data area (job.c schedules them): each
 * window, under the locks of every stripe or unit it touches, is
 * rebuilt from the other members in pieces by the workers
 * (job-pieces.c), or zeroed where all it would be rebuilt from is a
 * hole.  A re-added member gets only what the bitmap marks.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "clock.h"
#include "job.h"

/* Rebuild progress events at 20, 40, 60 and 80 percent. */
static void
progress_event (struct raid_array *a, uint64_t before, uint64_t after,
                uint64_t total)
{
  static const enum raid_event at[] = {
    RAID_EVENT_REBUILD20, RAID_EVENT_REBUILD40, RAID_EVENT_REBUILD60,
    RAID_EVENT_REBUILD80,
  };
  unsigned i, pct;

  for (i = 0; i < 4; i++) {
    pct = 20 * (i + 1);
    if (before * 100 < pct * total && after * 100 >= pct * total)
      array_event (a, at[i], (int) a->job.target, "");
  }
}

/* The device a rebuild writes: the role's, or the replacement. */
static struct raid_slot *
rebuild_target (struct raid_array *a)
{
  return a->job.kind == RAID_JOB_REPLACE ? &a->spares[a->job.spare]
    : &a->slots[a->job.target];
}

/* member_keys callback: add key to the list. */
static void
collect_key (void *opaque, uint64_t key)
{
  struct { uint64_t *keys; size_t n; } *k = opaque;
  k->keys[k->n++] = key;
}

/* member_keys callback: note whether key's region is dirty. */
static void
note_dirty_key (void *opaque, uint64_t key)
{
  struct { struct raid_array *a; bool dirty; } *d = opaque;
  d->dirty |= bitmap_dirty (d->a, key);
}

/* Is unit `unit` of the target's data area in a dirty region? */
static bool
unit_dirty (struct raid_array *a, uint64_t unit)
{
  struct { struct raid_array *a; bool dirty; } d = { a, false };

  a->ops->member_keys (a, a->job.target, unit, unit, note_dirty_key, &d);
  return d.dirty;
}

/* A re-added member needs only what was written while it was away: the
 * units the bitmap marks.  How much of [pos, pos+len) from pos is all
 * marked (*needed set) or all clean (*needed clear); a whole recovery
 * needs everything. */
static uint64_t
same_need_run (struct raid_array *a, uint64_t pos, uint64_t len,
               bool *needed)
{
  const uint64_t U = a->geo.unit_bytes;
  uint64_t run;

  *needed = true;
  if (!a->job.partial)
    return len;
  *needed = unit_dirty (a, pos / U);
  for (run = U; run < len && unit_dirty (a, (pos + run) / U) == *needed;
       run += U)
    ;
  return run < len ? run : len;
}

/* Write [off, off+len) of the target: out, or zeros where out is NULL.
 * A failed write fails the target.  0, or -1 with errno set. */
static int
write_target (struct raid_array *a, const uint8_t *out, uint64_t off,
              uint64_t len)
{
  struct raid_slot *t = rebuild_target (a);
  const uint64_t at = t->data_offset_bytes + off;
  char why[160];
  int e;

  if ((out ? t->io->ops->pwrite (t->io, out, len, at)
       : t->io->ops->zero (t->io, len, at)) == 0)
    return 0;
  e = errno;
  snprintf (why, sizeof why, "%s at %" PRIu64 " while rebuilding: %s",
            out ? "pwrite" : "zero", at, strerror (e));
  array_fail_member (a, a->job.kind == RAID_JOB_REPLACE
                     ? a->geo.members + a->job.spare : a->job.target, why);
  errno = e;
  return -1;
}

/* Reconstruct [off, off+len) of the target into worker i's buffer and
 * write it there; where everything it would be rebuilt from is a hole
 * (sparse member files), zero it instead: nothing is read or computed,
 * and the target stays as sparse as its sources. */
static int
rebuild_piece (struct raid_array *a, const struct member_set *gone,
               uint64_t off, uint64_t len, unsigned i)
{
  uint8_t *out;

  if (a->ops->unwritten (a, a->job.target, off, len, gone))
    return write_target (a, NULL, off, len);
  out = scratch_get (&a->job_buffers.out[i], len);
  if (!out ||
      a->ops->reconstruct (a, a->job.target, off, len, gone, out,
                           &a->job_buffers.level[i]) == -1)
    return -1;
  return write_target (a, out, off, len);
}

/* A rebuild's piece: target bytes [at, at+n) as worker i. */
static int
rebuild_one (struct pieces *p, uint64_t at, uint64_t n, unsigned i)
{
  return rebuild_piece (p->a, p->gone, at, n, i);
}

/* Rebuild [pos, pos+len) with workers taking pieces in turn.  (The
 * window's locks cover every piece; a piece need not be whole
 * stripes.)  0, or -1 with errno set. */
static int
rebuild_in_pieces (struct raid_array *a, uint64_t pos, uint64_t len,
                   const struct member_set *gone)
{
  struct pieces p = {
    .a = a, .gone = gone, .pos = pos, .len = len, .each = PIECE_BYTES,
    .do_piece = rebuild_one,
  };

  return run_pieces (&p, worker_count (a, p.each, len));
}

/* Rebuild [pos, pos+len) of the target under the locks of every
 * stripe or unit it holds there, then move the front. */
static int
rebuild_window (struct raid_array *a, uint64_t pos, uint64_t len)
{
  const uint64_t U = a->geo.unit_bytes;
  struct raid_slot *t = rebuild_target (a);
  struct { uint64_t *keys; size_t n; } k = { NULL, 0 };
  struct members_view v;
  struct member_set gone;
  unsigned *slots = NULL, m;
  size_t nslots, nkeys = (len + U - 1) / U;
  int r = -1;

  k.keys = malloc (nkeys * sizeof *k.keys);
  slots = malloc (nkeys * sizeof *slots);
  if (!k.keys || !slots) {
    errno = ENOMEM;
    goto out;
  }
  a->ops->member_keys (a, a->job.target, pos / U, (pos + len - 1) / U,
                       collect_key, &k);
  stripe_lock_keys (&a->locks, k.keys, k.n, slots, &nslots);
  array_view (a, &v);
  gone = v.gone;
  for (m = 0; m < v.nrec; m++)
    member_set_add (&gone, v.rec[m]);
  member_set_add (&gone, a->job.target);
  /* A window all holes is zeroed in one call: as pieces, the workers'
   * punches contended for the target's lock and took three times as
   * long on tmpfs. */
  r = a->ops->unwritten (a, a->job.target, pos, len, &gone)
    ? write_target (a, NULL, pos, len)
    : rebuild_in_pieces (a, pos, len, &gone);
  if (r == 0)
    __atomic_store_n (&t->front, pos + len, __ATOMIC_RELEASE);
  stripe_unlock_slots (&a->locks, slots, nslots);
 out:
  free (k.keys);
  free (slots);
  return r;
}

void
array_start_replace (struct raid_array *a, unsigned role, unsigned spare)
{
  array_quiesce (a);
  pthread_mutex_lock (&a->sb_lock);
  a->spares[spare].front = 0;
  __atomic_store_n (&a->spares[spare].state, SLOT_RECOVERING,
                    __ATOMIC_RELEASE);
  a->replacement = spare;
  a->replacing = (int) role;
  start_rebuild (a, RAID_JOB_REPLACE, role, spare, 0);
  pthread_mutex_unlock (&a->sb_lock);
  array_unquiesce (a);
}

/* Replacement done: the new device takes the role, the old one leaves,
 * recorded faulty as md does. */
static void
finish_replace (struct raid_array *a)
{
  unsigned r = a->job.target, i = a->job.spare, j;
  struct raid_slot *old = &a->slots[r], new = a->spares[i];
  uint32_t old_dev = old->sb.dev_number;

  array_quiesce (a);
  pthread_mutex_lock (&a->sb_lock);
  a->replacing = -1;
  for (j = i; j + 1 < a->nspares; j++)
    a->spares[j] = a->spares[j + 1];
  a->nspares--;
  old->state = SLOT_FAULTY;
  snprintf (old->why, sizeof old->why, "replaced by %s", new.path);
  a->spares[a->nspares++] = *old;
  *old = new;
  old->state = SLOT_ACTIVE;
  for (j = 0; j < a->geo.members; j++) {
    a->slots[j].sb.dev_roles[new.sb.dev_number] = r;
    a->slots[j].sb.dev_roles[old_dev] = MD_ROLE_FAULTY;
  }
  for (j = 0; j < a->nspares; j++) {
    a->spares[j].sb.dev_roles[new.sb.dev_number] = r;
    a->spares[j].sb.dev_roles[old_dev] = MD_ROLE_FAULTY;
  }
  a->job.kind = RAID_JOB_NONE;
  array_write_superblocks_locked (a);
  pthread_mutex_unlock (&a->sb_lock);
  array_unquiesce (a);
}

/* The target is rebuilt: it serves in its role (a replacement takes
 * over the role), recorded in the superblocks and announced. */
static void
finish_rebuild (struct raid_array *a)
{
  unsigned r = a->job.target;

  a->last_work_bytes = a->job.work_bytes;
  array_event (a, RAID_EVENT_REBUILD_FINISHED, (int) r,
               raid_job_name (a->job.kind));
  if (a->job.kind == RAID_JOB_REPLACE) {
    finish_replace (a);
    array_log (a, RAID_LOG_INFO, "array %s: replacement of member %u "
               "finished: %s now holds it", a->name, r, a->slots[r].path);
  }
  else {
    pthread_mutex_lock (&a->sb_lock);
    a->slots[r].partial = false;
    __atomic_store_n (&a->slots[r].state, SLOT_ACTIVE, __ATOMIC_RELEASE);
    a->job.kind = RAID_JOB_NONE;
    array_write_superblocks_locked (a);
    pthread_mutex_unlock (&a->sb_lock);
    array_log (a, RAID_LOG_INFO, "array %s: recovery of member %u (%s) "
               "finished: %" PRIu64 " bytes rebuilt", a->name, r,
               a->slots[r].path, a->last_work_bytes);
  }
  array_event (a, RAID_EVENT_SPARE_ACTIVE, (int) r, "");
}

/* Checkpoint the front once it is checkpoint_bytes past the last one
 * and a second has passed.  A checkpoint writes every device's bitmap
 * header and superblock and flushes it, one device after the other:
 * 31 ms on 6 disk-like NBD members and a spare, where a member under
 * 1 GiB checkpointed after every 16 MiB step (0.42 s at 40 MB/s) and
 * the rebuild reached 0.80 of a member's bandwidth
 * (client-tests/bench/FINDINGS.md, "Rebuild on disks").  A killed
 * server redoes at most a second more. */
static bool
checkpoint_due (const struct raid_array *a)
{
  return a->job.pos - a->job.checkpointed >= checkpoint_bytes (a)
         && now_ms () - a->job.checkpointed_ms >= REBUILD_CHECKPOINT_MS;
}

/* One step of a recovery or replacement: up to budget bytes of the
 * target rebuilt (a re-add skips what the bitmap says is clean). */
int
step_rebuild (struct raid_array *a, uint64_t budget)
{
  struct raid_slot *t = rebuild_target (a);
  uint64_t len, before = a->job.pos;
  bool needed;

  if (slot_state (t) != SLOT_RECOVERING) {     /* it failed meanwhile */
    pthread_mutex_lock (&a->sb_lock);
    a->job.kind = RAID_JOB_NONE;
    if (a->replacing >= 0) {
      pthread_mutex_unlock (&a->sb_lock);
      array_quiesce (a);
      a->replacing = -1;
      array_unquiesce (a);
    }
    else
      pthread_mutex_unlock (&a->sb_lock);
    return 1;
  }
  len = a->job.end - a->job.pos;
  if (len > budget)
    len = budget;
  if (len > RAID_JOB_STEP_MAX)
    len = RAID_JOB_STEP_MAX;
  len = (len + a->geo.unit_bytes - 1) / a->geo.unit_bytes * a->geo.unit_bytes;
  if (len > a->job.end - a->job.pos)
    len = a->job.end - a->job.pos;
  len = same_need_run (a, a->job.pos, len, &needed);
  if (needed) {
    if (rebuild_window (a, a->job.pos, len) == -1)
      return -1;
    a->job.work_bytes += len;
  }
  else
    __atomic_store_n (&rebuild_target (a)->front, a->job.pos + len,
                      __ATOMIC_RELEASE);
  a->job.pos += len;
  progress_event (a, before, a->job.pos, a->job.end);
  if (a->job.pos == a->job.end) {
    finish_rebuild (a);
    return 1;
  }
  if (a->job.kind == RAID_JOB_RECOVERY && checkpoint_due (a)) {
    array_write_superblocks (a);
    a->job.checkpointed = a->job.pos;
    a->job.checkpointed_ms = now_ms ();
  }
  return 1;
}
