/* nbdraid: member failure, read-error repair and the superblock updates
 * that record them, the md way: a member whose write fails is marked
 * faulty in the superblocks of the others (events+1, role 0xfffe) and
 * the array runs on degraded; a read error is repaired by rewriting
 * what the other members say the range holds.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "array.h"
#include "superblock-io.h"

void
array_unavailable (const struct raid_array *a, struct member_set *gone)
{
  unsigned m;

  memset (gone, 0, sizeof *gone);
  for (m = 0; m < a->geo.members; m++)
    if (slot_state (&a->slots[m]) != SLOT_ACTIVE)
      member_set_add (gone, m);
}

bool
array_alive_without (const struct raid_array *a, const struct member_set *gone)
{
  return geometry_survives (&a->geo, gone->bits);
}

int
array_check_alive (struct raid_array *a)
{
  if (__atomic_load_n (&a->failed, __ATOMIC_ACQUIRE)) {
    errno = EIO;
    return -1;
  }
  return 0;
}

void
array_record_faulty (struct raid_array *a, unsigned m)
{
  uint32_t dev = array_slot (a, m)->sb.dev_number;
  unsigned i;

  if (dev >= array_slot (a, m)->sb.max_dev)
    return;                     /* the superblocks never knew it */
  for (i = 0; i < a->geo.members; i++)
    a->slots[i].sb.dev_roles[dev] = MD_ROLE_FAULTY;
  for (i = 0; i < a->nspares; i++)
    a->spares[i].sb.dev_roles[dev] = MD_ROLE_FAULTY;
}

/* Move a device from active or recovering to faulty; false if it was
 * neither. */
static bool
mark_faulty (struct raid_slot *s)
{
  int old = slot_state (s);

  do
    if (old != SLOT_ACTIVE && old != SLOT_RECOVERING)
      return false;
  while (!__atomic_compare_exchange_n (&s->state, &old, SLOT_FAULTY, false,
                                       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
  return true;
}

/* A replacement being built failed: drop it, the original serves on. */
static bool
take_out_spare (struct raid_array *a, unsigned index, const char *why)
{
  struct raid_slot *s = array_slot (a, index);

  if (!mark_faulty (s))
    return false;
  snprintf (s->why, sizeof s->why, "%s", why);
  array_log (a, RAID_LOG_ERROR, "array %s: %s failed: %s; not using it",
             a->name, s->path, why);
  array_event (a, RAID_EVENT_FAIL_SPARE, (int) index, why);
  /* The job sees the replacement faulty and gives up on it. */
  return true;
}

/* A role a shrink drops (index, an op index past the roles) failed:
 * the old geometry's stripes do without it as long as the parity
 * covers what else is gone. */
static bool
take_out_leaving (struct raid_array *a, unsigned index, const char *why)
{
  struct raid_slot *s = array_slot (a, index);
  struct member_set gone;

  if (!mark_faulty (s))
    return false;
  snprintf (s->why, sizeof s->why, "%s", why);
  array_record_faulty (a, index);
  array_event (a, RAID_EVENT_FAIL, (int)index, why);
  if (reshape_gone (a, false, &gone) == 0) {
    array_log (a, RAID_LOG_ERROR,
               "array %s: member %u (%s), which the reshape drops, "
               "failed: %s; reshaping without it",
               a->name, index, s->path, why);
    return true;
  }
  array_event (a, RAID_EVENT_FAILED_ARRAY, (int)index, "");
  array_log (a, RAID_LOG_ERROR,
             "array %s: member %u (%s) failed: %s; the data not reshaped "
             "yet has lost more members than it tolerates: every request "
             "fails with EIO",
             a->name, index, s->path, why);
  __atomic_store_n (&a->failed, 1, __ATOMIC_RELEASE);
  return true;
}

/* Mark role m faulty; true if it was in use until now.  Called with
 * sb_lock held. */
static bool
take_out (struct raid_array *a, unsigned m, const char *why)
{
  struct raid_slot *s;
  struct member_set gone;
  bool spare;

  if (m >= a->geo.members + reshape_leaving (a))
    return take_out_spare (a, m, why);
  if (m >= a->geo.members)
    return take_out_leaving (a, m, why);
  s = &a->slots[m];
  spare = slot_state (s) == SLOT_RECOVERING;
  if (!mark_faulty (s))
    return false;
  /* What is read from now on comes from the members the array has
   * left (the degraded path, the far copy alone), not from windows
   * read while it had this one. */
  read_ahead_forget (&a->ra, UINT64_MAX, 0);
  snprintf (s->why, sizeof s->why, "%s", why);
  array_record_faulty (a, m);
  array_unavailable (a, &gone);
  /* mdadm: a spare being rebuilt that fails is FailSpare; a failure
   * seen happen is no DegradedArray (that is for arrays found so). */
  array_event (a, spare ? RAID_EVENT_FAIL_SPARE : RAID_EVENT_FAIL, (int) m,
               why);
  if (array_alive_without (a, &gone)) {
    array_log (a, RAID_LOG_ERROR, "array %s: member %u (%s) failed: %s; "
               "running degraded without it", a->name, m, s->path, why);
    return true;
  }
  array_event (a, RAID_EVENT_FAILED_ARRAY, (int) m, "");
  array_log (a, RAID_LOG_ERROR, "array %s: member %u (%s) failed: %s; the "
             "array has lost more members than it tolerates and fails every "
             "request with EIO", a->name, m, s->path, why);
  __atomic_store_n (&a->failed, 1, __ATOMIC_RELEASE);
  return true;
}

/* The highest events count among the roles' superblocks. */
static uint64_t
max_events (const struct raid_array *a)
{
  uint64_t e = 0;
  unsigned i;

  for (i = 0; i < a->geo.members; i++)
    if (a->slots[i].sb.events > e)
      e = a->slots[i].sb.events;
  return e;
}

/* Write one device's superblock (these events, the resync and recovery
 * offsets) after its bitmap header, and flush it. */
static int
write_one (struct raid_array *a, struct raid_slot *s, uint64_t events,
           uint64_t now)
{
  s->sb.events = events;
  s->sb.utime = now;
  s->sb.resync_offset_sectors = array_resync_offset (a);
  /* md v1.2: recovery_offset says how far a rebuilt device is valid,
   * or one filling an empty role in a reshape (md moves it with
   * reshape_position). */
  if (slot_state (s) == SLOT_RECOVERING) {
    s->sb.feature_map |= MD_FEATURE_RECOVERY_OFFSET;
    s->sb.recovery_offset_sectors = slot_front (s) / 512;
  }
  else if (a->reshape.active && s >= a->slots && s < a->slots + a->geo.members
           && member_set_has (&a->reshape.fresh, (unsigned)(s - a->slots))) {
    s->sb.feature_map |= MD_FEATURE_RECOVERY_OFFSET;
    s->sb.recovery_offset_sectors = reshape_fresh_front (a, &s->sb) / 512;
  }
  else {
    s->sb.feature_map &= ~MD_FEATURE_RECOVERY_OFFSET;
    s->sb.recovery_offset_sectors = 0;
  }
  /* The bitmap's events go with the superblock's: md takes a bitmap
   * older than the superblock for stale. */
  if (bitmap_write_header (a, s, events) == -1 ||
      md_sb_write (s->io, &s->sb, array_owner_record (a)) == -1 || s->io->ops->flush (s->io) == -1)
    return -1;
  return 0;
}

/* Active or being rebuilt: a device whose superblock is kept current
 * and whose read errors are repaired. */
static bool
in_use (const struct raid_slot *s)
{
  return slot_state (s) == SLOT_ACTIVE || slot_state (s) == SLOT_RECOVERING;
}

/* With sb_lock held.  A member whose superblock cannot be written fails
 * too, which changes the roles: go round again until all writes work. */
int
array_write_superblocks_locked (struct raid_array *a)
{
  uint64_t events = max_events (a) + 1, now = md_time_now ();
  char why[160];
  bool again = true;
  unsigned i;

  if (a->readonly)
    return 0;
  while (again) {
    again = false;
    for (i = 0; i < a->geo.members; i++) {
      struct raid_slot *s = &a->slots[i];
      if (!in_use (s) || write_one (a, s, events, now) == 0)
        continue;
      snprintf (why, sizeof why, "superblock write: %s", strerror (errno));
      again |= take_out (a, i, why);
    }
  }
  for (i = 0; i < a->nspares; i++) {
    struct raid_slot *s = &a->spares[i];
    if (in_use (s) && write_one (a, s, events, now) == -1) {
      snprintf (why, sizeof why, "superblock write: %s", strerror (errno));
      take_out_spare (a, a->geo.members + i, why);
    }
  }
  /* The journal device's goes with the others' (md writes every
   * device's), from a role's view of the array. */
  for (i = 0; i < a->geo.members; i++)
    if (in_use (&a->slots[i])) {
      journal_write_superblock (a, &a->slots[i].sb, events, now);
      break;
    }
  return array_check_alive (a);
}

int
array_write_superblocks (struct raid_array *a)
{
  int r;

  pthread_mutex_lock (&a->sb_lock);
  r = array_write_superblocks_locked (a);
  pthread_mutex_unlock (&a->sb_lock);
  return r;
}

void
array_fail_member (struct raid_array *a, unsigned m, const char *why)
{
  pthread_mutex_lock (&a->sb_lock);
  if (take_out (a, m, why))
    array_write_superblocks_locked (a);
  pthread_mutex_unlock (&a->sb_lock);
}

/* A failed op for the log and the device's why: what it was, where on
 * the device, and the error. */
static void
describe_op (const struct raid_array *a, const struct io_op *op, char *buf,
             size_t len)
{
  snprintf (buf, len, "%s%s at %" PRIu64 ": %s", io_kind_name (op->kind),
            op->metadata ? " of the bitmap" : "", op->off + (op->metadata ? 0
            : array_slot ((struct raid_array *) a, op->member)->data_offset_bytes),
            strerror (op->err));
}

int
array_settle_writes (struct raid_array *a, struct io_batch *b)
{
  char why[160];
  size_t i;

  for (i = 0; i < b->n; i++)
    if (b->ops[i].err && b->ops[i].err != ENODEV) {
      describe_op (a, &b->ops[i], why, sizeof why);
      array_fail_member (a, b->ops[i].member, why);
    }
  return array_check_alive (a);
}

/* Errors that say the member itself is gone (its server died, the
 * connection broke, a request timed out), not that a sector is bad. */
static bool
member_vanished (int err)
{
  return err == ENOTCONN || err == ECONNRESET || err == ECONNREFUSED ||
    err == EPIPE || err == ETIMEDOUT || err == ESHUTDOWN || err == ENXIO;
}

/* md's failfast: a member so flagged is failed at its first read error
 * rather than repaired, unless the array cannot do without it (md
 * keeps its last copy too).  gone holds it and the others unreadable. */
static bool
failfast (const struct raid_array *a, unsigned member,
          const struct member_set *gone)
{
  struct member_set out;
  unsigned i;

  if (!(a->slots[member].sb.devflags & RAID_DEVFLAG_FAILFAST))
    return false;
  array_unavailable (a, &out);
  for (i = 0; i < a->geo.members; i++)
    if (member_set_has (gone, i) || i == member)
      member_set_add (&out, i);
  return array_alive_without (a, &out);
}

/* One failed read: log it with member and offset, put the member in
 * gone, and in repair if it is still active, to be rewritten. */
static void
read_failed (struct raid_array *a, const struct io_op *op,
             struct member_set *gone, struct member_set *repair)
{
  char what[160];

  member_set_add (gone, op->member);
  if (op->err == ENODEV)        /* it failed meanwhile: nothing to repair */
    return;
  describe_op (a, op, what, sizeof what);
  if (member_vanished (op->err) || failfast (a, op->member, gone)) {
    array_fail_member (a, op->member, what);
    return;
  }
  array_log (a, RAID_LOG_ERROR, "array %s: member %u (%s): %s; "
             "reconstructing from the other members and rewriting it",
             a->name, op->member, a->slots[op->member].path, what);
  if (in_use (&a->slots[op->member]))
    member_set_add (repair, op->member);
}

int
array_reads_failed (struct raid_array *a, const struct io_batch *b,
                    struct member_set *gone, struct member_set *repair,
                    struct io_batch *rewrite)
{
  size_t i;

  for (i = 0; i < b->n; i++) {
    const struct io_op *op = &b->ops[i];

    if (!op->err)
      continue;
    read_failed (a, op, gone, repair);
    /* A read-only array writes nothing, repairs included (md skips its
     * read-repair too): the data is rebuilt for the read only. */
    if (rewrite && !__atomic_load_n (&a->readonly, __ATOMIC_ACQUIRE) &&
        member_set_has (repair, op->member) &&
        io_batch_add (rewrite, IO_WRITE, op->member, op->off, op->len,
                      op->buf))
      return -1;
  }
  return 0;
}

int
array_settle_repairs (struct raid_array *a, struct io_batch *b)
{
  bool corrected = false;
  char why[160];
  size_t i;

  for (i = 0; i < b->n; i++) {
    const struct io_op *op = &b->ops[i];
    struct raid_slot *s = array_slot (a, op->member);

    if (op->err == 0) {
      __atomic_add_fetch (&s->sb.cnt_corrected_read, 1, __ATOMIC_RELAXED);
      array_log (a, RAID_LOG_ERROR, "array %s: member %u (%s): read error "
                 "at %" PRIu64 " corrected", a->name, op->member, s->path,
                 s->data_offset_bytes + op->off);
      corrected = true;
    }
    else if (op->err != ENODEV) {
      describe_op (a, op, why, sizeof why);
      array_fail_member (a, op->member, why);
    }
  }
  /* Keep cnt_corrected_read on disk, as md does at its next update. */
  if (corrected)
    array_write_superblocks (a);
  return array_check_alive (a);
}
