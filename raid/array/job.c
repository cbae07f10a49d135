/* nbdraid: background jobs: resync, recovery onto a spare, replacement,
 * check and repair.
 *
 * One job at a time, advanced by raid_job_step in windows of a few MiB
 * under the stripe locks of the window, so client I/O interleaves with
 * it and always sees a consistent stripe.  Progress is checkpointed in
 * the superblocks as md does (recovery_offset, resync_offset), so a
 * killed server resumes where it was.  The caller (the control plane)
 * decides how fast to call it.
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

/* The name status and the log give a job ("idle" for none). */
const char *
raid_job_name (enum raid_job_kind kind)
{
  static const char *const names[] = {
    [RAID_JOB_NONE] = "idle",         [RAID_JOB_RESYNC] = "resync",
    [RAID_JOB_RECOVERY] = "recovery", [RAID_JOB_CHECK] = "check",
    [RAID_JOB_REPAIR] = "repair",     [RAID_JOB_REPLACE] = "replace",
    [RAID_JOB_RESHAPE] = "reshape",
  };
  return names[kind];
}

uint64_t
raid_client_bytes (const struct raid_array *a)
{
  struct raid_requests rq;

  array_requests (a, &rq);
  return rq.read_bytes + rq.write_bytes + rq.zero_bytes;
}

/* Bytes of each member one sync unit covers, for progress. */
uint64_t
unit_progress_bytes (const struct raid_array *a)
{
  return a->geo.parity_members ? a->geo.chunk_bytes
    : a->geo.unit_bytes * a->geo.copies / a->geo.members;
}

void
raid_job_progress (struct raid_array *a, enum raid_job_kind *kind,
                   uint64_t *done, uint64_t *total)
{
  uint64_t per;

  pthread_mutex_lock (&a->sb_lock);
  *kind = a->job.kind;
  per = *kind == RAID_JOB_RECOVERY || *kind == RAID_JOB_REPLACE
    ? 1 : unit_progress_bytes (a);
  *done = a->job.pos * per;
  *total = a->job.end * per;
  pthread_mutex_unlock (&a->sb_lock);
}

/* Checkpoint every 1/64 of a member, at least 1 MiB, at most 256 MiB:
 * a killed server redoes little, a big array writes few superblocks. */
uint64_t
checkpoint_bytes (const struct raid_array *a)
{
  uint64_t c = a->geo.member_bytes / 64;
  return c < (1 << 20) ? 1 << 20 : c > (256ULL << 20) ? 256ULL << 20 : c;
}

/* A role no device serves: failed, or missing. */
static bool
is_empty_role (const struct raid_slot *s)
{
  enum slot_state st = slot_state (s);
  return st == SLOT_FAULTY || st == SLOT_MISSING;
}

/* Is any role not active (failed, missing, or still being rebuilt)? */
static bool
degraded (const struct raid_array *a)
{
  unsigned m;

  for (m = 0; m < a->geo.members; m++)
    if (slot_state (&a->slots[m]) != SLOT_ACTIVE)
      return true;
  return false;
}

/* Can a check run with the members the array has lost?  A parity
 * array that still has a syndrome to compare, with every role in sync
 * or gone (not one half rebuilt): it finds mismatches, it cannot say
 * where.  Mirrors need every copy. */
static bool
can_check_degraded (const struct raid_array *a)
{
  unsigned m, lost = 0;

  for (m = 0; m < a->geo.members; m++) {
    enum slot_state st = slot_state (&a->slots[m]);
    if (st == SLOT_RECOVERING)
      return false;
    lost += st != SLOT_ACTIVE;
  }
  return a->geo.parity_members > 0 && lost < a->geo.parity_members;
}

bool
array_spare_fits (const struct raid_array *a, unsigned i)
{
  const struct raid_slot *s = &a->spares[i];

  /* The first spares may hold roles a shrink drops (reshape.h). */
  return i >= reshape_leaving (a) && slot_state (s) == SLOT_ACTIVE && s->io &&
    s->io->size_bytes >= s->data_offset_bytes + a->geo.member_bytes;
}

unsigned
array_usable_spares (const struct raid_array *a)
{
  unsigned i, n = 0;

  for (i = 0; i < a->nspares; i++)
    n += array_spare_fits (a, i);
  return n;
}

void
array_spare_takes_role (struct raid_array *a, unsigned r, char *changed,
                        size_t changedlen)
{
  size_t used = strlen (changed);
  unsigned i;

  memset (&a->slots[r], 0, sizeof a->slots[r]);
  a->slots[r].state = SLOT_MISSING;
  for (i = 0; !array_spare_fits (a, i); i++)
    ;
  snprintf (changed + used, used < changedlen ? changedlen - used : 0, "%s\n",
            a->spares[i].path);
  array_promote_spare (a, i, r);
}

void
array_promote_spare (struct raid_array *a, unsigned i, unsigned r)
{
  struct raid_slot *slot = &a->slots[r], spare = a->spares[i];
  unsigned j;

  for (j = i; j + 1 < a->nspares; j++)
    a->spares[j] = a->spares[j + 1];
  a->nspares--;
  if (slot->path) {
    slot->state = slot->state == SLOT_MISSING && !slot->io
      ? SLOT_MISSING : SLOT_FAULTY;
    a->spares[a->nspares++] = *slot;
  }
  *slot = spare;
  slot->front = 0;
  slot->why[0] = '\0';
  ppl_member_joins (a, r);
  /* md: the device takes the role, with recovery_offset from 0. */
  for (j = 0; j < a->geo.members; j++)
    a->slots[j].sb.dev_roles[spare.sb.dev_number] = r;
  for (j = 0; j < a->nspares; j++)
    a->spares[j].sb.dev_roles[spare.sb.dev_number] = r;
  __atomic_store_n (&slot->state, SLOT_RECOVERING, __ATOMIC_RELEASE);
}

/* Start a recovery of role, or its replacement by spare, from byte
 * `from` of the data area; log and announce it. */
void
start_rebuild (struct raid_array *a, enum raid_job_kind kind, unsigned role,
               unsigned spare, uint64_t from)
{
  a->job = (struct raid_job) {
    .kind = kind, .target = role, .spare = spare, .pos = from,
    .end = a->geo.member_bytes, .checkpointed = from, .started_at = from,
    .checkpointed_ms = now_ms (),
  };
  array_log (a, RAID_LOG_INFO, "array %s: %s of member %u (%s) starts at "
             "%" PRIu64 " of %" PRIu64 " bytes", a->name,
             raid_job_name (kind), role, kind == RAID_JOB_REPLACE
             ? a->spares[spare].path : a->slots[role].path, from,
             a->job.end);
  array_event (a, RAID_EVENT_REBUILD_STARTED, (int) role,
               raid_job_name (kind));
}

/* With no job: what does the array need?  Called with sb_lock held;
 * promoting a spare needs the array quiesced, which the caller does
 * when this sets *promote_spare_i and *promote_role (else -1). */
static void
choose_job (struct raid_array *a, int *promote_spare_i, int *promote_role)
{
  unsigned m, i;

  *promote_spare_i = *promote_role = -1;
  if (a->reshape.active) {
    reshape_start_job (a);
    return;
  }
  for (m = 0; m < a->geo.members; m++)
    if (slot_state (&a->slots[m]) == SLOT_RECOVERING) {
      start_rebuild (a, RAID_JOB_RECOVERY, m, 0, slot_front (&a->slots[m]));
      a->job.partial = a->slots[m].partial;
      return;
    }
  for (m = 0; m < a->geo.members; m++) {
    if (!is_empty_role (&a->slots[m]))
      continue;
    for (i = 0; i < a->nspares; i++)
      if (array_spare_fits (a, i)) {
        *promote_spare_i = (int) i;
        *promote_role = (int) m;
        return;
      }
  }
  if (a->resync_front < a->ops->sync_units (a) && !degraded (a)) {
    a->job = (struct raid_job) {
      .kind = RAID_JOB_RESYNC, .pos = a->resync_front,
      .end = a->ops->sync_units (a), .checkpointed = a->resync_front,
      .started_at = a->resync_front,
    };
    array_log (a, RAID_LOG_INFO, "array %s: resync starts at unit %" PRIu64
               " of %" PRIu64, a->name, a->job.pos, a->job.end);
    array_event (a, RAID_EVENT_REBUILD_STARTED, -1, "resync");
  }
}

/* With no job running, start what the array needs; a spare is promoted
 * into an empty role under quiesce, once both are checked again. */
static void
schedule (struct raid_array *a)
{
  int spare, role;

  pthread_mutex_lock (&a->sb_lock);
  choose_job (a, &spare, &role);
  pthread_mutex_unlock (&a->sb_lock);
  if (spare < 0)
    return;
  array_quiesce (a);
  pthread_mutex_lock (&a->sb_lock);
  /* Still empty, still a spare? (A request may have failed meanwhile.) */
  if (a->job.kind == RAID_JOB_NONE && is_empty_role (&a->slots[role]) &&
      (unsigned) spare < a->nspares &&
      slot_state (&a->spares[spare]) == SLOT_ACTIVE) {
    array_log (a, RAID_LOG_INFO, "array %s: spare %s takes the place of "
               "member %d (%s)", a->name, a->spares[spare].path, role,
               a->slots[role].path);
    array_promote_spare (a, (unsigned) spare, (unsigned) role);
    array_write_superblocks_locked (a);
    start_rebuild (a, RAID_JOB_RECOVERY, (unsigned) role, 0, 0);
  }
  pthread_mutex_unlock (&a->sb_lock);
  array_unquiesce (a);
}

int
raid_job_step (struct raid_array *a, uint64_t budget)
{
  unsigned i;
  int more = 0;

  /* Nested arrays rebuild and resync on their own, side by side. */
  for (i = 0; i < a->nchildren; i++)
    more |= raid_job_step (a->children[i], budget) == 1;
  if (a->readonly || array_check_alive (a) == -1)
    return more;
  if (a->job.kind == RAID_JOB_NONE)
    schedule (a);
  switch (a->job.kind) {
  case RAID_JOB_NONE:
    /* A finished rebuild's buffers are not worth keeping while idle. */
    job_buffers_free (&a->job_buffers);
    return more;
  case RAID_JOB_RESYNC:
    return step_resync (a, budget);
  case RAID_JOB_RECOVERY:
  case RAID_JOB_REPLACE:
    return step_rebuild (a, budget);
  case RAID_JOB_CHECK:
  case RAID_JOB_REPAIR:
    return step_check (a, budget);
  case RAID_JOB_RESHAPE:
    return step_reshape (a, budget);
  }
  return more;
}

int
raid_job_check (struct raid_array *a, bool repair, uint64_t from,
                char *err, size_t errlen)
{
  int r = 0;

  pthread_mutex_lock (&a->sb_lock);
  /* A read-only array runs no background work: a check accepted there
   * would never move. */
  if (a->readonly)
    r = array_refuse (err, errlen, "array %s is read-only: no %s", a->name,
                      repair ? "repair" : "check");
  else if (a->job.kind != RAID_JOB_NONE)
    r = array_refuse (err, errlen,
                      "array %s is busy with a %s (%" PRIu64 "%%); "
                      "wait for it%s",
                      a->name, raid_job_name (a->job.kind),
                      a->job.end ? a->job.pos * 100 / a->job.end : 0,
                      a->job.kind == RAID_JOB_CHECK
                              || a->job.kind == RAID_JOB_REPAIR
                          ? " or stop it with idle"
                          : "");
  else if (a->geo.tolerates == 0)
    r = array_refuse (err, errlen, "array %s is RAID%d: no redundancy to %s",
                      a->name, a->geo.level, repair ? "repair" : "check");
  else if (degraded (a) && (repair || !can_check_degraded (a)))
    r = array_refuse (err, errlen,
                      "array %s is degraded: %s needs every member", a->name,
                      repair ? "repair" : "check");
  else {
    a->job = (struct raid_job) {
      .kind = repair ? RAID_JOB_REPAIR : RAID_JOB_CHECK,
      .end = a->ops->sync_units (a),
      .pos = from / unit_progress_bytes (a),
    };
    if (a->job.pos >= a->job.end)
      a->job.pos = 0;
    if (a->job.pos)
      array_log (a, RAID_LOG_INFO, "array %s: %s resumed at %" PRIu64 "%%",
                 a->name, raid_job_name (a->job.kind),
                 a->job.pos * 100 / a->job.end);
    else
      array_log (a, RAID_LOG_INFO, "array %s: %s started", a->name,
                 raid_job_name (a->job.kind));
    array_event (a, RAID_EVENT_REBUILD_STARTED, -1,
                 raid_job_name (a->job.kind));
  }
  pthread_mutex_unlock (&a->sb_lock);
  return r;
}

int
raid_job_idle (struct raid_array *a, char *err, size_t errlen)
{
  int r = 0;

  pthread_mutex_lock (&a->sb_lock);
  if (a->job.kind == RAID_JOB_CHECK || a->job.kind == RAID_JOB_REPAIR) {
    array_log (a, RAID_LOG_INFO, "array %s: %s stopped at %" PRIu64 "%%",
               a->name, raid_job_name (a->job.kind),
               a->job.pos * 100 / a->job.end);
    a->job.kind = RAID_JOB_NONE;
  }
  else if (a->job.kind != RAID_JOB_NONE)
    r = array_refuse (err, errlen,
                      "array %s: a %s cannot be stopped (the array "
                      "needs it); slow it down with speed-limit",
                      a->name, raid_job_name (a->job.kind));
  pthread_mutex_unlock (&a->sb_lock);
  return r;
}
