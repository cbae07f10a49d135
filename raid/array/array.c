/* nbdraid: the engine's verbs on an assembled array. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "clock.h"
#include "io-gather.h"

/* Log a message (printf-style) through the log callback, if any. */
int
array_refuse (char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (err, errlen, fmt, ap);
  va_end (ap);
  return -1;
}

void
array_log (const struct raid_array *a, enum raid_log_level level,
           const char *fmt, ...)
{
  char msg[512];
  va_list ap;

  if (!a->log)
    return;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  a->log (a->log_opaque, level, msg);
}

/* An event's name, as monitor prints it and passes it to --program
 * ("Fail", "DegradedArray", ...). */
const char *
raid_event_name (enum raid_event event)
{
  static const char *const names[] = {
    [RAID_EVENT_FAIL] = "Fail",
    [RAID_EVENT_FAIL_SPARE] = "FailSpare",
    [RAID_EVENT_DEGRADED_ARRAY] = "DegradedArray",
    [RAID_EVENT_FAILED_ARRAY] = "FailedArray",
    [RAID_EVENT_SPARES_MISSING] = "SparesMissing",
    [RAID_EVENT_REBUILD_STARTED] = "RebuildStarted",
    [RAID_EVENT_REBUILD20] = "Rebuild20",
    [RAID_EVENT_REBUILD40] = "Rebuild40",
    [RAID_EVENT_REBUILD60] = "Rebuild60",
    [RAID_EVENT_REBUILD80] = "Rebuild80",
    [RAID_EVENT_REBUILD_FINISHED] = "RebuildFinished",
    [RAID_EVENT_SPARE_ACTIVE] = "SpareActive",
    [RAID_EVENT_MOVE_SPARE] = "MoveSpare",
    [RAID_EVENT_MISMATCH_LOCATED] = "MismatchLocated",
  };
  return names[event];
}

/* Report an event through the event callback: member is an op index (-1
 * for none), passed on as the device's path. */
void
array_event (const struct raid_array *a, enum raid_event event, int member,
             const char *detail)
{
  const struct raid_slot *s = member >= 0
    ? array_slot ((struct raid_array *) a, (unsigned) member) : NULL;
  const char *path = s && s->path ? s->path : "";

  if (a->event)
    a->event (a->log_opaque, event, a->name, path, detail ? detail : "");
}

/* Op indexes: roles first, then the devices outside them. */
struct raid_slot *
array_slot (struct raid_array *a, unsigned index)
{
  return index < a->geo.members ? &a->slots[index]
    : &a->spares[index - a->geo.members];
}

struct raid_slot *
array_reference (const struct raid_array *a)
{
  struct raid_slot *best = NULL;
  unsigned m;

  /* Looked up each time: a grow, a takeover, a failure changes which
   * devices hold roles, and a role's slot may be empty after one. */
  for (m = 0; m < a->geo.members; m++) {
    struct raid_slot *s = &((struct raid_array *)a)->slots[m];
    enum slot_state st = slot_state (s);
    if (s->io && (st == SLOT_ACTIVE || st == SLOT_RECOVERING)
        && (!best || s->sb.events > best->sb.events))
      best = s;
  }
  return best ? best : &((struct raid_array *)a)->slots[0];
}

/* A member takes an op if it is active, or if it is being rebuilt and
 * the op stays below the rebuilt part (writes above it are not needed:
 * the rebuild will get there). */
static bool
takes (const struct raid_slot *s, const struct io_op *op)
{
  switch (slot_state (s)) {
  case SLOT_ACTIVE:
    return true;
  case SLOT_RECOVERING:
    return op->kind == IO_FLUSH || op->metadata ||
      op->off + op->len <= slot_front (s);
  default:
    return false;
  }
}

/* Add a sample to a moving average over the last eight or so (races
 * lose a sample). */
static void
average_in (uint64_t *avg_ns, uint64_t took_ns)
{
  uint64_t ema = __atomic_load_n (avg_ns, __ATOMIC_RELAXED);

  __atomic_store_n (avg_ns, ema - ema / 8 + took_ns / 8, __ATOMIC_RELAXED);
}

/* Add a read's time to m's average read time.  The first read seeds
 * it.  A read over four times the average (and a microsecond, lest a
 * tiny average never grow) counts as that much: one read held up (the
 * thread preempted, a miss on a busy disk) moves the average by three
 * eighths at most, so a copy does not look slow for it (read-latency.c
 * wants four times its fastest partner), while a copy that did turn slow gets
 * there all the same, its average growing by up to three eighths a
 * read (15 reads from a hundredth of its new time). */
static void
read_time_in (struct member *m, uint64_t took_ns)
{
  uint64_t ema = __atomic_load_n (&m->read_ns, __ATOMIC_RELAXED);
  uint64_t most = 4 * ema + 1000;

  if (ema == 0)
    __atomic_store_n (&m->read_ns, took_ns, __ATOMIC_RELAXED);
  else
    average_in (&m->read_ns, took_ns < most ? took_ns : most);
}

/* Run one op on its device: ENODEV if the member does not take it.
 * Keeps the member's average service time for quick, and of a data
 * read that succeeded its average read time for the copies family's
 * choice of copy (an error says nothing of how fast it reads).  That
 * one is the read's time shared among the ops the member had from us
 * when it began, itself included: a member that serves one op at a
 * time (a disk, an export behind a serializing server) makes a read
 * wait for those ahead of it, and a copy merely busy must not look
 * far (the copies family would pile reads on the others: a RAID10 of
 * equal remote disks read random 4K a fifth slower so). */
static void
exec_op (void *ctx, struct io_op *op)
{
  struct raid_array *a = ctx;
  struct raid_slot *s = array_slot (a, op->member);
  struct member *m;
  uint64_t off, start, took;
  unsigned ahead;
  int r = -1;

  if (!takes (s, op)) {
    op->err = ENODEV;
    return;
  }
  m = s->io;
  ahead = __atomic_fetch_add (&m->ops_in_flight, 1, __ATOMIC_RELAXED);
  start = now_ns ();
  off = op->metadata ? op->off : s->data_offset_bytes + op->off;
  switch (op->kind) {
  case IO_READ:
    r = m->ops->pread (m, op->buf, op->len, off);
    break;
  case IO_WRITE:
    r = m->ops->pwrite (m, op->buf, op->len, off);
    break;
  case IO_ZERO:
    r = m->ops->zero (m, op->len, off);
    break;
  case IO_FLUSH:
    r = m->ops->flush (m);
    break;
  }
  op->err = r == 0 ? 0 : errno;
  took = now_ns () - start;
  __atomic_sub_fetch (&m->ops_in_flight, 1, __ATOMIC_RELAXED);
  average_in (&m->service_ns, took);
  if (op->kind == IO_READ && r == 0 && !op->metadata)
    read_time_in (m, took / (ahead + 1));
}

/* Operations on buffered members this quick are the CPU copying
 * memory (page cache, tmpfs): they run in the caller, one after the
 * other.  Handing them to the pool's threads costs a wake-up and a
 * context switch each, more than the copies gain on a 2-core VM; the
 * callers' own parallelism (nbdkit's threads, the rebuild's workers)
 * keeps the cores busy.  Slower ones (page cache misses) and members
 * that wait on a device or the network overlap in the pool. */
#define CPU_BOUND_NS 200000

unsigned
array_cpus (void)
{
  static unsigned cpus;
  unsigned n = __atomic_load_n (&cpus, __ATOMIC_RELAXED);

  if (n == 0) {
    long online = sysconf (_SC_NPROCESSORS_ONLN);
    n = online < 1 ? 1 : (unsigned) online;
    __atomic_store_n (&cpus, n, __ATOMIC_RELAXED);
  }
  return n;
}

bool
array_member_waits (const struct member *m)
{
  struct raid_array *inner = member_array_inner (m);
  unsigned i;

  if (!inner)
    return m->waits;
  for (i = 0; i < inner->geo.members + inner->nspares; i++) {
    const struct member *io = array_slot (inner, i)->io;
    if (io && array_member_waits (io))
      return true;
  }
  return false;
}

/* Can b run in the caller?  Not if a member waits on a device or the
 * network, nor if a buffered one was slow lately, unless the caller is
 * itself one of a set the pool shares out (a job's piece, a nested
 * array's request): its siblings keep the cores busy, and beside them,
 * preempted, every copy looks slow. */
static bool
quick (struct raid_array *a, const struct io_batch *b)
{
  const bool nested = iopool_nested ();
  size_t i;

  for (i = 0; i < b->n; i++) {
    const struct member *m = array_slot (a, b->ops[i].member)->io;
    if (!m)
      continue;
    if (array_member_waits (m))
      return false;
    if (!nested &&
        __atomic_load_n (&m->service_ns, __ATOMIC_RELAXED) >= CPU_BOUND_NS)
      return false;
  }
  return true;
}

/* io_gather_plan's joinable: member ops join on an active member that
 * waits (a call costs it a round trip or a request's fixed cost).  A
 * rebuilding one takes ops below its front only, op by op. */
static bool
joins_ops (void *ctx, unsigned member)
{
  struct raid_slot *s = array_slot (ctx, member);

  return slot_state (s) == SLOT_ACTIVE && s->io && array_member_waits (s->io);
}

/* Run b's ops in the pool, those that continue each other on a member
 * that waits joined into one call (io-gather.h). */
static void
run_in_pool (struct raid_array *a, struct io_batch *b)
{
  struct io_gather g;

  if (b->n < 2 || io_gather_plan (&g, b, joins_ops, a) == -1) {
    iopool_run (a->pool, b->ops, b->n, exec_op, a);
    return;
  }
  iopool_run (a->pool, g.ops, g.n, exec_op, a);
  io_gather_done (&g, b);
}

size_t
array_run (struct raid_array *a, struct io_batch *b)
{
  size_t i, failed = 0;

  if (quick (a, b))
    for (i = 0; i < b->n; i++)
      exec_op (a, &b->ops[i]);
  else
    run_in_pool (a, b);
  for (i = 0; i < b->n; i++)
    failed += b->ops[i].err != 0;
  return failed;
}

/* Take the view a request uses: the members gone, those recovering with
 * their fronts, and a replacement being built. */
void
array_view (const struct raid_array *a, struct members_view *v)
{
  unsigned m;

  memset (v, 0, sizeof *v);
  v->repl_role = -1;
  for (m = 0; m < a->geo.members; m++) {
    const struct raid_slot *s = &a->slots[m];
    enum slot_state state = slot_state (s);
    /* More recovering members than we track are simply not used. */
    if (state == SLOT_RECOVERING && v->nrec < VIEW_MAX_RECOVERING) {
      v->rec[v->nrec] = m;
      v->front[v->nrec++] = slot_front (s);
    }
    else if (state != SLOT_ACTIVE)
      member_set_add (&v->gone, m);
  }
  if (a->replacing >= 0) {
    const struct raid_slot *r = &a->spares[a->replacement];
    if (slot_state (r) == SLOT_RECOVERING) {
      v->repl_role = a->replacing;
      v->repl_index = a->geo.members + a->replacement;
      v->repl_front = slot_front (r);
    }
  }
}

void
view_gone (const struct members_view *v, uint64_t member_end,
           struct member_set *gone)
{
  unsigned i;

  *gone = v->gone;
  for (i = 0; i < v->nrec; i++)
    if (v->front[i] < member_end)
      member_set_add (gone, v->rec[i]);
}

bool
view_usable (const struct members_view *v, unsigned m, uint64_t member_end)
{
  unsigned i;

  if (member_set_has (&v->gone, m))
    return false;
  for (i = 0; i < v->nrec; i++)
    if (v->rec[i] == m)
      return v->front[i] >= member_end;
  return true;
}

int
view_add_write (const struct members_view *v, struct io_batch *b,
                enum io_kind kind, unsigned member, uint64_t off,
                uint64_t len, void *buf)
{
  if (io_batch_add (b, kind, member, off, len, buf))
    return -1;
  /* A member being replaced: its replacement gets the write too, where
   * it is already rebuilt. */
  if ((int) member == v->repl_role && off + len <= v->repl_front)
    return io_batch_add (b, kind, v->repl_index, off, len, buf);
  return 0;
}

void
array_quiesce (struct raid_array *a)
{
  stripe_lock (&a->locks, 0, STRIPE_LOCKS - 1, true);
}

/* Let requests in again after array_quiesce. */
void
array_unquiesce (struct raid_array *a)
{
  stripe_unlock (&a->locks, 0, STRIPE_LOCKS - 1);
}

void
array_lock_units (struct raid_array *a, uint64_t first, uint64_t last,
                  bool exclusive)
{
  stripe_lock (&a->locks, a->ops->lock_key (a, first),
               a->ops->lock_key (a, last), exclusive);
}

/* Release the locks array_lock_units took. */
void
array_unlock_units (struct raid_array *a, uint64_t first, uint64_t last)
{
  stripe_unlock (&a->locks, a->ops->lock_key (a, first),
                 a->ops->lock_key (a, last));
}

/* The data the journal replay found without its parity (md's
 * data-only stripes), logged again at the tail: into the write-back
 * cache as md loads them (r5c_recovery_load_one_stripe), or written as
 * a client's write is, now that the array runs. */
static int
write_kept (struct raid_array *a)
{
  struct raid_journal *j = &a->journal;
  struct journal_cache *c = &j->cache;
  unsigned i;
  int r;

  for (i = 0; i < j->nkept; i++) {
    uint64_t offset = j->kept[i].sector * 512, s;

    if (c->on) {
      s = offset / c->stripe_bytes;
      stripe_lock (&a->locks, s, s, true);
      r = journal_cache_put (c, j->kept[i].page, R5L_BLOCK_BYTES, offset,
                             j->kept_pos, j->kept_seq);
      stripe_unlock (&a->locks, s, s);
    }
    else
      r = raid_write (a, j->kept[i].page, R5L_BLOCK_BYTES, offset, false);
    if (r == -1) {
      array_log (a, RAID_LOG_ERROR,
                 "array %s: writing the journal's data at array byte %" PRIu64
                 " after its replay: %s",
                 a->name, offset, strerror (errno));
      return -1;
    }
  }
  journal_kept_free (j);
  return 0;
}

int
raid_start (struct raid_array *a)
{
  unsigned i;

  for (i = 0; i < a->nchildren; i++)
    if (raid_start (a->children[i]) == -1)
      return -1;
  if (iopool_start (a->pool) == -1 || array_read_ahead_start (a) == -1 ||
      behind_start (a) == -1 || array_heartbeat_start (a) == -1 ||
      journal_cache_start (a) == -1 || write_kept (a) == -1)
    return -1;
  a->started = true;
  return 0;
}

/* Fill in shape from the geometry the superblocks gave the array. */
void
raid_get_shape (const struct raid_array *a, struct raid_shape *shape)
{
  *shape = (struct raid_shape) {
    .level = a->geo.level, .layout = a->geo.layout,
    .members = a->geo.members,
    .chunk_bytes = a->geo.lvl->has_chunk ? a->geo.chunk_bytes : 0,
    .array_bytes = a->geo.array_bytes, .unit_bytes = a->geo.unit_bytes,
    .stripe_bytes = a->geo.unit_bytes * a->geo.data_members,
  };
}

/* The size the array serves, in bytes. */
uint64_t
raid_size (const struct raid_array *a)
{
  /* nbdraid grow changes it while connections come. */
  uint64_t whole = __atomic_load_n (&a->geo.array_bytes, __ATOMIC_ACQUIRE);
  uint64_t limit = __atomic_load_n (&a->size_limit, __ATOMIC_ACQUIRE);

  return limit && limit < whole ? limit : whole;
}

bool
raid_clean (const struct raid_array *a)
{
  return array_reference (a)->sb.resync_offset_sectors == MD_RESYNC_CLEAN;
}

int
array_flush (struct raid_array *a)
{
  struct io_batch b;
  unsigned i, ticket;
  int r = 0;

  if (array_check_alive (a))
    return -1;
  behind_drain (a);
  ticket = retired_enter (&a->retired);
  io_batch_init (&b);
  for (i = 0; i < a->geo.members + a->nspares && r == 0; i++) {
    enum slot_state st = slot_state (array_slot (a, i));
    if (st == SLOT_ACTIVE ? i < a->geo.members : st == SLOT_RECOVERING)
      r = io_batch_add (&b, IO_FLUSH, i, 0, 0, NULL);
  }
  if (r == 0) {
    array_run (a, &b);
    r = array_settle_writes (a, &b);
  }
  io_batch_free (&b);
  retired_exit (&a->retired, ticket);
  return r;
}

bool
array_member_hole (struct raid_array *a, unsigned m, uint64_t off,
                   uint64_t len)
{
  const struct raid_slot *s = array_slot (a, m);

  return s->io->ops->is_hole (s->io, len, s->data_offset_bytes + off) == 1;
}
