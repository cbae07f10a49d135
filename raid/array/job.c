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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

/* The name status and the log give a job ("idle" for none). */
const char *
raid_job_name (enum raid_job_kind kind)
{
  static const char *const names[] = {
    [RAID_JOB_NONE] = "idle", [RAID_JOB_RESYNC] = "resync",
    [RAID_JOB_RECOVERY] = "recovery", [RAID_JOB_CHECK] = "check",
    [RAID_JOB_REPAIR] = "repair", [RAID_JOB_REPLACE] = "replace",
  };
  return names[kind];
}

uint64_t
raid_client_bytes (const struct raid_array *a)
{
  return __atomic_load_n (&a->client_bytes, __ATOMIC_RELAXED);
}

/* Bytes of each member one sync unit covers, for progress. */
static uint64_t
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
static uint64_t
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

/* Rebuild progress events at 20, 40, 60 and 80 percent. */
static void
progress_event (struct raid_array *a, uint64_t before, uint64_t after,
                uint64_t total)
{
  unsigned pct;
  char detail[8];

  for (pct = 20; pct <= 80; pct += 20)
    if (before * 100 < pct * total && after * 100 >= pct * total) {
      snprintf (detail, sizeof detail, "%u", pct);
      array_event (a, RAID_EVENT_REBUILD_PROGRESS, (int) a->job.target,
                   detail);
    }
}

/* Take spare i into empty role r and start rebuilding it; the device
 * that held the role stays listed outside the roles, faulty, until the
 * admin removes it.  With the array quiesced and sb_lock held. */
static void
promote_spare (struct raid_array *a, unsigned i, unsigned r)
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
  /* md: the device takes the role, with recovery_offset from 0. */
  for (j = 0; j < a->geo.members; j++)
    a->slots[j].sb.dev_roles[spare.sb.dev_number] = r;
  for (j = 0; j < a->nspares; j++)
    a->spares[j].sb.dev_roles[spare.sb.dev_number] = r;
  __atomic_store_n (&slot->state, SLOT_RECOVERING, __ATOMIC_RELEASE);
}

/* Start a recovery of role, or its replacement by spare, from byte
 * `from` of the data area; log and announce it. */
static void
start_rebuild (struct raid_array *a, enum raid_job_kind kind, unsigned role,
               unsigned spare, uint64_t from)
{
  a->job = (struct raid_job) {
    .kind = kind, .target = role, .spare = spare, .pos = from,
    .end = a->geo.member_bytes, .checkpointed = from, .started_at = from,
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
      if (slot_state (&a->spares[i]) == SLOT_ACTIVE &&
          a->spares[i].io->size_bytes >=
          a->spares[i].data_offset_bytes + a->geo.member_bytes) {
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
    promote_spare (a, (unsigned) spare, (unsigned) role);
    array_write_superblocks_locked (a);
    start_rebuild (a, RAID_JOB_RECOVERY, (unsigned) role, 0, 0);
  }
  pthread_mutex_unlock (&a->sb_lock);
  array_unquiesce (a);
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

/* Free the workers' buffers; the next rebuild allocates them again. */
void
job_buffers_free (struct job_buffers *b)
{
  unsigned i;

  for (i = 0; i < JOB_WORKERS_MAX; i++) {
    scratch_free (&b->out[i]);
    scratch_free (&b->level[i]);
  }
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

/* A quarter MiB of a member per piece: a window gives every worker
 * several, so none waits long for the last one, and a piece's buffers
 * stay in the caches from its reads to its write. */
#define PIECE_BYTES (256 * 1024)
/* What the workers' buffers may take together (each holds a piece of
 * every member and the piece rebuilt). */
#define WORKERS_BYTES (32 * 1024 * 1024)

/* A window's pieces, taken in turn by the workers: do_piece handles
 * [at, at+n) as worker i, 0 or -1 with errno set. */
struct pieces {
  struct raid_array *a;
  uint64_t pos, len, each;      /* target bytes, or sync units */
  uint64_t next;                /* offset of the next piece not taken */
  const struct io_op *first;    /* worker i's op is first[i] */
  int (*do_piece) (struct pieces *p, uint64_t at, uint64_t n, unsigned i);
  const struct member_set *gone;        /* rebuild: what not to read */
  /* resync: units not in holes; check: mismatched sectors */
  uint64_t count[JOB_WORKERS_MAX];
};

/* A worker: take pieces of the window until none is left; a failed one
 * leaves its error in the worker's op and stops the rest. */
static void
take_pieces (void *opaque, struct io_op *op)
{
  struct pieces *p = opaque;
  unsigned i = (unsigned) (op - p->first);
  uint64_t off;

  while ((off = __atomic_fetch_add (&p->next, p->each, __ATOMIC_RELAXED))
         < p->len)
    if (p->do_piece (p, p->pos + off,
                     p->each < p->len - off ? p->each : p->len - off,
                     i) == -1) {
      op->err = errno ? errno : EIO;
      /* The window has failed: leave the others no piece to start. */
      __atomic_store_n (&p->next, p->len, __ATOMIC_RELAXED);
      break;
    }
}

/* Workers for pieces of each bytes of a member: several per core, so
 * that while one waits for its reads or its write (a disk, the network,
 * the target file's lock), another computes; within the memory bound. */
static size_t
worker_count (const struct raid_array *a, uint64_t each, uint64_t len)
{
  size_t n = 4 * array_cpus ();
  uint64_t fit = WORKERS_BYTES / ((a->geo.members + 1) * each);

  if (n > JOB_WORKERS_MAX)
    n = JOB_WORKERS_MAX;
  if (n > fit)
    n = fit ? fit : 1;
  if (n > (len + each - 1) / each)
    n = (len + each - 1) / each;
  return n;
}

/* Run p's pieces on n workers: a single thread would leave every other
 * core idle while it waits for reads, computes and writes.  0, or -1
 * with errno set. */
static int
run_pieces (struct pieces *p, size_t n)
{
  struct io_op ops[JOB_WORKERS_MAX];
  size_t i;
  int r = 0;

  p->first = ops;
  for (i = 0; i < n; i++)       /* a worker's op carries only its error */
    ops[i] = (struct io_op) { .err = 0 };
  iopool_run (p->a->pool, ops, n, take_pieces, p);
  for (i = 0; i < n; i++)
    if (ops[i].err) {
      errno = ops[i].err;
      r = -1;
    }
  return r;
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

/* One step of a recovery or replacement: up to budget bytes of the
 * target rebuilt (a re-add skips what the bitmap says is clean). */
static int
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
  if (a->job.pos - a->job.checkpointed >= checkpoint_bytes (a) &&
      a->job.kind == RAID_JOB_RECOVERY) {
    array_write_superblocks (a);
    a->job.checkpointed = a->job.pos;
  }
  return 1;
}

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
static int
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

/* One step of a check or repair, up to budget bytes of each member; at
 * the end, log and announce the mismatches. */
static int
step_check (struct raid_array *a, uint64_t budget)
{
  uint64_t per = unit_progress_bytes (a), n = budget / per;
  char detail[32];

  if (n == 0)
    n = 1;
  if (n > a->job.end - a->job.pos)
    n = a->job.end - a->job.pos;
  if (units_in_pieces (a, a->job.pos, n, check_one, &a->job.mismatches)
      == -1)
    return -1;
  a->job.pos += n;
  if (a->job.pos == a->job.end) {
    snprintf (detail, sizeof detail, "%" PRIu64, a->job.mismatches);
    array_log (a, RAID_LOG_INFO, "array %s: %s finished: %" PRIu64
               " mismatched sectors%s", a->name, raid_job_name (a->job.kind),
               a->job.mismatches, a->job.kind == RAID_JOB_REPAIR
               ? " rewritten" : "");
    a->last_mismatches = a->job.mismatches;
    array_event (a, RAID_EVENT_CHECK_FINISHED, -1, detail);
    pthread_mutex_lock (&a->sb_lock);
    a->job.kind = RAID_JOB_NONE;
    pthread_mutex_unlock (&a->sb_lock);
  }
  return 1;
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
  }
  return more;
}

static int
refuse (char *err, size_t errlen, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* Write the reason a job verb refuses into err; returns -1. */
static int
refuse (char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (err, errlen, fmt, ap);
  va_end (ap);
  return -1;
}

int
raid_job_check (struct raid_array *a, bool repair, char *err, size_t errlen)
{
  int r = 0;

  pthread_mutex_lock (&a->sb_lock);
  if (a->readonly && repair)
    r = refuse (err, errlen, "array %s is read-only: no repair", a->name);
  else if (a->job.kind != RAID_JOB_NONE)
    r = refuse (err, errlen, "array %s is busy with a %s (%" PRIu64 "%%); "
                "wait for it%s", a->name, raid_job_name (a->job.kind),
                a->job.end ? a->job.pos * 100 / a->job.end : 0,
                a->job.kind == RAID_JOB_CHECK || a->job.kind == RAID_JOB_REPAIR
                ? " or stop it with idle" : "");
  else if (degraded (a))
    r = refuse (err, errlen, "array %s is degraded: %s needs every member",
                a->name, repair ? "repair" : "check");
  else {
    a->job = (struct raid_job) {
      .kind = repair ? RAID_JOB_REPAIR : RAID_JOB_CHECK,
      .end = a->ops->sync_units (a),
    };
    array_log (a, RAID_LOG_INFO, "array %s: %s started", a->name,
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
    r = refuse (err, errlen, "array %s: a %s cannot be stopped (the array "
                "needs it); slow it down with speed-limit", a->name,
                raid_job_name (a->job.kind));
  pthread_mutex_unlock (&a->sb_lock);
  return r;
}
