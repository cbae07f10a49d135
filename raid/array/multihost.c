/* nbdraid: multi-host protection.  Once members are network exports,
 * two servers can reach the same members, and two writers destroy an
 * array silently; md has no guard for that short of md-cluster's DLM.
 * As ZFS's multihost protection does with its uberblocks, a server
 * that serves an array writes an owner record (owner.h) beside every
 * member's superblock and renews it every heartbeat, with the
 * superblock's update time.  A server that finds a record of a server
 * that did not stop watches it for WATCH_BEATS of that server's
 * intervals and refuses the array if it moves; one that finds
 * somebody else's record where its own should be has been taken over
 * and stops writing.  No clocks are compared: only whether a record
 * changes.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "clock.h"
#include "superblock-io.h"

/* A heartbeat that stood still this many of its intervals has stopped:
 * the time a crashed server's array waits before another takes it. */
#define WATCH_BEATS 5
/* Bounds on the interval taken from a record, which may be garbage. */
#define INTERVAL_MIN_MS 100
#define INTERVAL_MAX_MS 60000

/* The devices that carry our record: in use, with a superblock that
 * leaves its sector free, and not an array nested in this one (it
 * carries its own records on its own members). */
static bool
carries_record (const struct raid_slot *s)
{
  enum slot_state st = slot_state (s);

  return s->io && (st == SLOT_ACTIVE || st == SLOT_RECOVERING) &&
    owner_fits (s->sb.max_dev) && !member_array_inner (s->io);
}

/* Wall clock, for the record: shown to people, never compared. */
static uint64_t
wall_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_REALTIME, &ts);
  return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static void
sleep_ms (uint64_t ms)
{
  struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000 };

  nanosleep (&ts, NULL);
}

/* Read the records of the devices that carry one: seen[m] valid where
 * found[m].  A device that cannot be read (within timeout_ms, where not
 * 0: md_sb_read_owner_within) carries none. */
static void
read_records (struct raid_array *a, struct owner_record *seen, bool *found,
              unsigned timeout_ms)
{
  unsigned m;

  for (m = 0; m < a->geo.members; m++)
    found[m]
        = carries_record (&a->slots[m])
          && md_sb_read_owner_within (a->slots[m].io, &seen[m], timeout_ms) == 1
          && memcmp (seen[m].set_uuid, a->slots[m].sb.set_uuid, 16) == 0;
}

/* "host H (pid P)". */
static void
describe (const struct owner_record *r, char *buf, size_t len)
{
  snprintf (buf, len, "host %s (pid %" PRIu32 ")",
            r->host[0] ? r->host : "?", r->pid);
}

/* How long ago its last beat was, by our clock and its own (which may
 * disagree: shown, never relied on). */
static double
beat_age_s (const struct owner_record *r)
{
  return (int64_t) (wall_ms () - r->time_ms) / 1000.0;
}

static bool
same_beat (const struct owner_record *x, const struct owner_record *y)
{
  return x->owner_id == y->owner_id && x->seq == y->seq &&
    x->state == y->state;
}

/* Watch the records first[] (found[]) for WATCH_BEATS intervals of the
 * longest interval among them.  The device whose record moved, or -1
 * if none did. */
static int
watch (struct raid_array *a, const struct owner_record *first,
       const bool *found, uint64_t interval_ms)
{
  struct owner_record now[RAID_MAX_MEMBERS];
  bool found_now[RAID_MAX_MEMBERS];
  uint64_t deadline = now_ms () + WATCH_BEATS * interval_ms;
  unsigned m;

  while (now_ms () < deadline) {
    sleep_ms (interval_ms / 4);
    read_records (a, now, found_now, 0);
    for (m = 0; m < a->geo.members; m++)
      if (found_now[m] && (!found[m] || !same_beat (&first[m], &now[m])))
        return (int) m;
  }
  return -1;
}

/* Write our record beside the superblock of every device that carries
 * one, with sb_lock held: the superblock as we hold it, its update
 * time now (md's utime); each device given up after timeout_ms if not
 * 0. */
static void
write_records (struct raid_array *a, unsigned timeout_ms)
{
  uint64_t now = md_time_now ();
  unsigned m;

  a->owner.time_ms = wall_ms ();
  a->owner.pid = (uint32_t) getpid ();
  for (m = 0; m < a->geo.members; m++) {
    struct raid_slot *s = &a->slots[m];
    if (!carries_record (s))
      continue;
    s->sb.utime = now;
    if (md_sb_write_within (s->io, &s->sb, &a->owner, timeout_ms) == 0)
      s->heartbeat_failed = false;
    else if (!s->heartbeat_failed) {
      s->heartbeat_failed = true;
      array_log (a, RAID_LOG_WARNING, "array %s: member %u (%s): heartbeat "
                 "write: %s", a->name, m, s->path, strerror (errno));
    }
  }
}

/* Somebody else's record on a device that carries ours: another
 * server took the array over (force=true, once this host was thought
 * dead).  Writing on would destroy what it writes: refuse writes and
 * write nothing more, not even our record. */
static bool
taken_over (struct raid_array *a, const struct owner_record *seen,
            const bool *found)
{
  char who[160];
  unsigned m;

  for (m = 0; m < a->geo.members; m++)
    if (found[m] && seen[m].owner_id != a->owner.owner_id) {
      __atomic_store_n (&a->refuse_writes, true, __ATOMIC_SEQ_CST);
      __atomic_store_n (&a->readonly, true, __ATOMIC_SEQ_CST);
      a->claimed = false;
      a->owner_lost = true;
      /* Its writes change the members under any window read before. */
      read_ahead_stop (&a->ra);
      describe (&seen[m], who, sizeof who);
      array_log (a, RAID_LOG_ERROR, "array %s: taken over by %s (its "
                 "record on member %u, %s): this server writes nothing "
                 "more to it; stop it", a->name, who, m, a->slots[m].path);
      return true;
    }
  return false;
}

/* Write our record, wait wait_ms and read the records back: another
 * server that read them as we did wrote its own, and the last to
 * write keeps a device; whoever lost one backs off (if both lose one,
 * neither starts, and a retry settles it).  When taking the array
 * from a server still beating (force), waiting two of its beats lets
 * it see our record and stop; a beat of its that was under way when
 * we wrote may have put its record back, so we write ours again, a
 * few times. */
static int
settle (struct raid_array *a, uint64_t wait_ms, bool insist, char *err,
        size_t errlen)
{
  struct owner_record seen[RAID_MAX_MEMBERS];
  bool found[RAID_MAX_MEMBERS], lost;
  char who[160];
  unsigned m, tries;

  for (tries = 0; tries < 3; tries++) {
    pthread_mutex_lock (&a->sb_lock);
    a->owner.seq++;
    write_records (a, 0);
    pthread_mutex_unlock (&a->sb_lock);
    sleep_ms (wait_ms);
    read_records (a, seen, found, 0);
    for (lost = false, m = 0; m < a->geo.members && !lost; m++)
      lost = found[m] && seen[m].owner_id != a->owner.owner_id;
    if (!lost) {
      a->claimed = true;
      return 0;
    }
    if (!insist)
      break;
  }
  describe (&seen[m - 1], who, sizeof who);
  snprintf (err, errlen, "array %s: %s %s (member %u, %s)", a->name, who,
            insist ? "keeps writing its heartbeat over ours: it was not "
            "fenced" : "started it at the same time; try again once one of "
            "them serves it", m - 1, a->slots[m - 1].path);
  return -1;
}

int
array_claim (struct raid_array *a, bool force, char *err, size_t errlen)
{
  struct owner_record seen[RAID_MAX_MEMBERS];
  bool found[RAID_MAX_MEMBERS];
  uint64_t interval_ms = 0;
  char who[160];
  int live = -1, moved;
  unsigned m;

  if (a->readonly || a->heartbeat_ms == 0)
    return 0;
  read_records (a, seen, found, 0);
  for (m = 0; m < a->geo.members; m++)
    if (found[m] && seen[m].state == OWNER_SERVING) {
      uint64_t i = seen[m].interval_ms;
      i = i < INTERVAL_MIN_MS ? INTERVAL_MIN_MS
        : i > INTERVAL_MAX_MS ? INTERVAL_MAX_MS : i;
      if (i > interval_ms)
        interval_ms = i;
      if (live == -1)
        live = (int) m;
    }
  if (live >= 0) {
    describe (&seen[live], who, sizeof who);
    if (force)
      array_log (a, RAID_LOG_WARNING, "array %s: taking it over from %s "
                 "(force=true)", a->name, who);
    else {
      array_log (a, RAID_LOG_INFO, "array %s: %s served it and did not "
                 "stop (last heartbeat %.1f s ago): watching its heartbeat "
                 "for %.1f s", a->name, who, beat_age_s (&seen[live]),
                 WATCH_BEATS * interval_ms / 1000.0);
      moved = watch (a, seen, found, interval_ms);
      if (moved >= 0) {
        snprintf (err, errlen, "array %s: in use by %s: its heartbeat on "
                  "member %d (%s) goes on; stop that server, or fence "
                  "that host and start with force=true", a->name, who,
                  moved, a->slots[moved].path);
        return -1;
      }
      array_log (a, RAID_LOG_WARNING, "array %s: the heartbeat of %s "
                 "stood still for %.1f s: taking the array over",
                 a->name, who, WATCH_BEATS * interval_ms / 1000.0);
    }
  }

  memcpy (a->owner.set_uuid, array_reference (a)->sb.set_uuid, 16);
  if (getrandom (&a->owner.owner_id, sizeof a->owner.owner_id, 0) !=
      sizeof a->owner.owner_id)
    a->owner.owner_id = wall_ms () ^ ((uint64_t) getpid () << 32);
  a->owner.seq = 0;
  a->owner.interval_ms = (uint32_t) a->heartbeat_ms;
  a->owner.state = OWNER_SERVING;
  if (gethostname (a->owner.host, sizeof a->owner.host - 1) == -1)
    a->owner.host[0] = '\0';
  return settle (a, live >= 0 && force ? 2 * interval_ms : 0,
                 live >= 0 && force, err, errlen);
}

/* One heartbeat (and, with state OWNER_STOPPED, the last): unless
 * somebody else's record is there now.  The devices go one after
 * another, each given up after an interval: a device that hangs
 * without an error (its host stopped answering) held the beat on every
 * device for the whole request timeout, and a standby watching five
 * beats took the array over while this server still served it.  Now
 * each hung device holds a beat up by two intervals (a read and a
 * write), and its beat fails (logged once) where the timeout would. */
static void
beat (struct raid_array *a, enum owner_state state)
{
  struct owner_record seen[RAID_MAX_MEMBERS];
  bool found[RAID_MAX_MEMBERS];
  const unsigned within = (unsigned)a->heartbeat_ms;

  pthread_mutex_lock (&a->sb_lock);
  if (a->claimed && !__atomic_load_n (&a->readonly, __ATOMIC_SEQ_CST)) {
    read_records (a, seen, found, within);
    if (!taken_over (a, seen, found)) {
      a->owner.seq++;
      a->owner.state = state;
      write_records (a, within);
    }
  }
  pthread_mutex_unlock (&a->sb_lock);
}

static void *
heartbeat_loop (void *arg)
{
  struct raid_array *a = arg;
  struct timespec at;

  pthread_mutex_lock (&a->heartbeat_lock);
  while (!a->heartbeat_stop) {
    clock_gettime (CLOCK_MONOTONIC, &at);
    at.tv_sec += (time_t) (a->heartbeat_ms / 1000);
    at.tv_nsec += (long) (a->heartbeat_ms % 1000) * 1000000;
    if (at.tv_nsec >= 1000000000) {
      at.tv_sec++;
      at.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait (&a->heartbeat_wake, &a->heartbeat_lock, &at);
    if (a->heartbeat_stop)
      break;
    pthread_mutex_unlock (&a->heartbeat_lock);
    beat (a, OWNER_SERVING);
    pthread_mutex_lock (&a->heartbeat_lock);
  }
  pthread_mutex_unlock (&a->heartbeat_lock);
  return NULL;
}

int
array_heartbeat_start (struct raid_array *a)
{
  pthread_condattr_t attr;
  int e;

  if (!a->claimed)
    return 0;
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (&a->heartbeat_wake, &attr);
  pthread_condattr_destroy (&attr);
  pthread_mutex_init (&a->heartbeat_lock, NULL);
  e = pthread_create (&a->heartbeat, NULL, heartbeat_loop, a);
  if (e) {
    errno = e;
    return -1;
  }
  a->heartbeat_running = true;
  return 0;
}

void
array_release (struct raid_array *a)
{
  if (a->heartbeat_running) {
    pthread_mutex_lock (&a->heartbeat_lock);
    a->heartbeat_stop = true;
    pthread_cond_signal (&a->heartbeat_wake);
    pthread_mutex_unlock (&a->heartbeat_lock);
    pthread_join (a->heartbeat, NULL);
    pthread_cond_destroy (&a->heartbeat_wake);
    pthread_mutex_destroy (&a->heartbeat_lock);
    a->heartbeat_running = false;
  }
  beat (a, OWNER_STOPPED);
  a->claimed = false;
}

int
array_still_owned (struct raid_array *a, char *err, size_t errlen)
{
  struct owner_record seen[RAID_MAX_MEMBERS];
  bool found[RAID_MAX_MEMBERS];
  char who[160];
  unsigned m;

  if (a->owner_lost) {
    snprintf (err, errlen, "array %s: another server took it over; "
              "this one writes nothing more to it", a->name);
    return -1;
  }
  if (!a->claimed)
    return 0;
  read_records (a, seen, found, 0);
  for (m = 0; m < a->geo.members; m++)
    if (found[m] && seen[m].owner_id != a->owner.owner_id) {
      describe (&seen[m], who, sizeof who);
      snprintf (err, errlen, "array %s: taken over by %s while read-only "
                "(member %u, %s)", a->name, who, m, a->slots[m].path);
      return -1;
    }
  return 0;
}

const struct owner_record *
array_owner_record (const struct raid_array *a)
{
  return a->claimed ? &a->owner : NULL;
}
