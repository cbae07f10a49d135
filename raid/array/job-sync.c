/* nbdraid: resync, and check and repair, in windows of sync units
 * (job.c schedules them), each unit under its own lock, by the workers
 * (job-pieces.c).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "job.h"

/* Set how far the resync has come, for resync_offset and the sweep. */
static void
set_resync_front (struct raid_array *a, uint64_t front)
{
  __atomic_store_n (&a->resync_front, front, __ATOMIC_RELEASE);
}

/* A resync's piece: sync units [at, at+n), counting those resynced. */
static int
sync_one (struct pieces *p, uint64_t at, uint64_t n, unsigned i)
{
  uint64_t done = 0;
  int r = p->a->ops->sync (p->a, at, n, &done);

  p->count[i] += done;
  return r;
}

/* A check's or repair's piece: sync units [at, at+n), adding up
 * mismatched sectors. */
static int
check_one (struct pieces *p, uint64_t at, uint64_t n, unsigned i)
{
  return p->a->ops->check (p->a, at, n, p->a->job.kind == RAID_JOB_REPAIR,
                           &p->count[i]);
}

/* Resync or check sync units [first, first+n) with workers taking
 * pieces in turn, each under the locks of its own units; add up what
 * they counted in *count.  0, or -1 with errno set. */
static int
units_in_pieces (struct raid_array *a, uint64_t first, uint64_t n,
                 int (*do_piece) (struct pieces *, uint64_t, uint64_t,
                                  unsigned), uint64_t *count)
{
  const uint64_t per = unit_progress_bytes (a);
  struct pieces p = {
    .a = a, .pos = first, .len = n, .do_piece = do_piece,
    .each = PIECE_BYTES / per ? PIECE_BYTES / per : 1,
  };
  size_t i;
  int r = run_pieces (&p, worker_count (a, p.each * per, n * per));

  for (i = 0; i < JOB_WORKERS_MAX; i++)
    *count += p.count[i];
  return r;
}

/* Resync: regions the bitmap marks (everything, without one) get their
 * parity recomputed or their first copy copied over the others. */
int
step_resync (struct raid_array *a, uint64_t budget)
{
  uint64_t per = unit_progress_bytes (a), n = budget / per, run, done = 0;

  if (n == 0)
    n = 1;
  /* Regions the bitmap says are in sync go by without I/O. */
  while (a->job.pos < a->job.end && !bitmap_dirty (a, a->job.pos))
    a->job.pos++;
  for (run = 0; run < n && a->job.pos + run < a->job.end &&
       bitmap_dirty (a, a->job.pos + run); run++)
    ;
  if (run && units_in_pieces (a, a->job.pos, run, sync_one, &done) == -1)
    return -1;
  a->job.pos += run;
  a->job.work_bytes += done * per;
  set_resync_front (a, a->job.pos);
  if (a->job.pos == a->job.end) {
    pthread_mutex_lock (&a->sb_lock);
    a->last_work_bytes = a->job.work_bytes;
    a->job.kind = RAID_JOB_NONE;
    array_write_superblocks_locked (a);
    pthread_mutex_unlock (&a->sb_lock);
    array_log (a, RAID_LOG_INFO, "array %s: resync finished: %" PRIu64
               " bytes of each member resynced", a->name, a->last_work_bytes);
    array_event (a, RAID_EVENT_REBUILD_FINISHED, -1, "resync");
    return 1;
  }
  if ((a->job.pos - a->job.checkpointed) * per >= checkpoint_bytes (a)) {
    array_write_superblocks (a);
    a->job.checkpointed = a->job.pos;
  }
  return 1;
}

/* Mismatches logged one by one in a check; the rest only add up. */
#define MISMATCH_LOG_MAX 20

/* "member 0 (/dev/sdb) and member 1 (/dev/sdc)" into buf. */
static const char *
name_members (const struct raid_array *a, const struct member_set *s,
              char *buf, size_t len)
{
  size_t used = 0;
  unsigned m, n = 0, count = member_set_count (s);

  buf[0] = '\0';
  for (m = 0; m < a->geo.members && used < len; m++)
    if (member_set_has (s, m))
      used += (size_t) snprintf (buf + used, len - used, "%s member %u (%s)",
                                 n++ == 0 ? "" : n == count ? " and" : ",",
                                 m, a->slots[m].path ? a->slots[m].path
                                 : "missing");
  return buf;
}

void
array_note_mismatch (struct raid_array *a, uint64_t unit, int m,
                     const struct member_set *suspects, uint64_t sectors)
{
  const char *what = a->geo.parity_members ? "stripe" : "unit";
  char who[512];

  if (m < 0)
    __atomic_add_fetch (&a->job.unlocated, sectors, __ATOMIC_RELAXED);
  else {
    __atomic_add_fetch (&a->job.located[m], sectors, __ATOMIC_RELAXED);
    __atomic_add_fetch (&a->slots[m].mismatched_sectors, sectors,
                        __ATOMIC_RELAXED);
  }
  if (__atomic_fetch_add (&a->job.logged, 1, __ATOMIC_RELAXED)
      >= MISMATCH_LOG_MAX)
    return;
  if (m < 0 && suspects)
    array_log (a, RAID_LOG_WARNING, "array %s: %s: %s %" PRIu64 ": %"
               PRIu64 " sectors disagree between%s, and no majority says "
               "which is right", a->name, raid_job_name (a->job.kind), what,
               unit, sectors, name_members (a, suspects, who, sizeof who));
  else if (m < 0)
    array_log (a, RAID_LOG_WARNING, "array %s: %s: %s %" PRIu64 ": %"
               PRIu64 " sectors disagree, on no one member the redundancy "
               "can name", a->name, raid_job_name (a->job.kind), what, unit,
               sectors);
  else
    array_log (a, RAID_LOG_WARNING, "array %s: %s: %s %" PRIu64 ": %"
               PRIu64 " sectors wrong on member %d (%s)", a->name,
               raid_job_name (a->job.kind), what, unit, sectors, m,
               a->slots[m].path ? a->slots[m].path : "missing");
}

/* A check or repair is done: log what it found, where, and announce it
 * (RebuildFinished, then MismatchLocated for each member it blames). */
static void
finish_check (struct raid_array *a)
{
  bool repair = a->job.kind == RAID_JOB_REPAIR;
  char detail[64];
  unsigned m;

  /* mdadm's words, in sectors where md counts them. */
  snprintf (detail, sizeof detail, "mismatches found: %" PRIu64
            " (on raid level %d)", a->job.mismatches, a->geo.level);
  array_log (a, RAID_LOG_INFO, "array %s: %s finished: %" PRIu64
             " mismatched sectors%s, %" PRIu64 " of them on no one member",
             a->name, raid_job_name (a->job.kind), a->job.mismatches,
             repair ? " repaired" : "", a->job.unlocated);
  a->last_mismatches = a->job.mismatches;
  a->last_unlocated = a->job.unlocated;
  array_event (a, RAID_EVENT_REBUILD_FINISHED, -1, detail);
  for (m = 0; m < a->geo.members; m++) {
    if (!a->job.located[m])
      continue;
    snprintf (detail, sizeof detail, "%" PRIu64, a->job.located[m]);
    array_log (a, RAID_LOG_WARNING, "array %s: %s found %" PRIu64 " sectors "
               "wrong on member %u (%s)%s", a->name,
               raid_job_name (a->job.kind), a->job.located[m], m,
               a->slots[m].path ? a->slots[m].path : "missing",
               repair ? ", and put them right" : "");
    array_event (a, RAID_EVENT_MISMATCH_LOCATED, (int) m, detail);
  }
  pthread_mutex_lock (&a->sb_lock);
  a->job.kind = RAID_JOB_NONE;
  pthread_mutex_unlock (&a->sb_lock);
}

/* scrub-fail-after: fail each member checks have found that much wrong
 * data on, unless the array would lose data with it. */
static void
fail_bad_members (struct raid_array *a)
{
  struct member_set gone;
  char why[160];
  unsigned m;

  for (m = 0; m < a->geo.members; m++) {
    uint64_t bad = __atomic_load_n (&a->slots[m].mismatched_sectors,
                                    __ATOMIC_RELAXED);
    if (bad < a->scrub_fail_after || slot_state (&a->slots[m]) != SLOT_ACTIVE)
      continue;
    array_unavailable (a, &gone);
    member_set_add (&gone, m);
    if (!array_alive_without (a, &gone))
      continue;                 /* its bytes are still the only copy */
    snprintf (why, sizeof why, "checks found %" PRIu64 " sectors of wrong "
              "data on it (scrub-fail-after = %" PRIu64 ")", bad,
              a->scrub_fail_after);
    array_fail_member (a, m, why);
  }
}

/* One step of a check or repair, up to budget bytes of each member; at
 * the end, log and announce the mismatches. */
int
step_check (struct raid_array *a, uint64_t budget)
{
  uint64_t per = unit_progress_bytes (a), n = budget / per;

  if (n == 0)
    n = 1;
  if (n > a->job.end - a->job.pos)
    n = a->job.end - a->job.pos;
  if (units_in_pieces (a, a->job.pos, n, check_one, &a->job.mismatches)
      == -1)
    return -1;
  if (a->scrub_fail_after)
    fail_bad_members (a);
  a->job.pos += n;
  if (a->job.pos == a->job.end)
    finish_check (a);
  return 1;
}
