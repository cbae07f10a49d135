/* nbdraid: a mirror reads its faster copy (read-latency.c).  Arrays of
 * member files, each read through a model that can add a delay to
 * every read and counts them.  RAID1 of two: a copy 2 ms slower than
 * the other serves few reads, copies of one speed share them, even
 * after one read held up, a slow copy that became fast is read again
 * (the probes), and neither the initial sync's rule (units not yet
 * synced read from the first copy) nor write-mostly gives way to
 * latency.  RAID1 of three: the one remote copy is slow.  RAID10 n2 of
 * eight: a copy is judged beside its pair, not the whole array, so a
 * pair of equally slow copies is not slow, a copy ten times slower
 * than its pair is, and one whose pair has no read time is not.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "clock.h"
#include "test-array.h"
#include "test-member-tap.h"
#include "test-report.h"

#define MEMBER_BYTES (4 * 1024 * 1024)
#define DATA_BYTES (1024 * 1024)
#define READ_BYTES 4096

/* A member as the test sees it: its own ops around the real ones. */
struct model {
  struct member_tap tap;
  unsigned delay_us;            /* added to every read (atomic) */
  unsigned once_us;             /* added to the next read (atomic) */
  unsigned reads;               /* reads it served (atomic) */
};

#define MAX_MODELS 8

static struct model models[MAX_MODELS];
static unsigned nmodels; /* the array's members */

static struct model *
model_of (const struct member *m)
{
  unsigned i;

  for (i = 0; i + 1 < nmodels && m != models[i].tap.m; i++)
    ;
  return &models[i];
}

/* Reads below this are metadata (the owner heartbeat reads the
 * superblock block every second): neither delayed nor counted.  Data
 * starts at 1 MiB or later (mdadm's smallest data offset). */
#define DATA_FROM (1024 * 1024)

static int
model_pread (struct member *m, void *buf, size_t len, uint64_t off)
{
  struct model *md = model_of (m);
  unsigned delay_us;

  if (off < DATA_FROM)
    return md->tap.real->pread (m, buf, len, off);
  delay_us = __atomic_load_n (&md->delay_us, __ATOMIC_RELAXED) +
    __atomic_exchange_n (&md->once_us, 0, __ATOMIC_RELAXED);

  if (delay_us)
    usleep (delay_us);
  __atomic_add_fetch (&md->reads, 1, __ATOMIC_RELAXED);
  return md->tap.real->pread (m, buf, len, off);
}

static void
model_wrap (struct raid_array *a)
{
  unsigned i;

  memset (models, 0, sizeof models);
  nmodels = a->geo.members;
  for (i = 0; i < nmodels; i++)
    member_tap (&models[i].tap, a->slots[i].io, model_pread);
}

static void
model_unwrap (void)
{
  unsigned i;

  for (i = 0; i < nmodels; i++)
    member_untap (&models[i].tap);
}

/* Each member's delay, from us[] (nmodels of them). */
static void
set_delays_of (const unsigned *us)
{
  unsigned i;

  for (i = 0; i < nmodels; i++)
    __atomic_store_n (&models[i].delay_us, us[i], __ATOMIC_RELAXED);
}

static void
set_delays (unsigned us0, unsigned us1)
{
  set_delays_of ((const unsigned[]){ us0, us1 });
}

static unsigned
reads_of (unsigned i)
{
  return __atomic_load_n (&models[i].reads, __ATOMIC_RELAXED);
}

/* n random 4K reads of the data, each checked against it; adds the
 * reads each member served to got[] (nmodels of them).  0, or -1
 * (reported). */
static int
read_some (struct raid_array *a, const uint8_t *data, unsigned n,
           unsigned *seed, unsigned *got)
{
  uint8_t buf[READ_BYTES];
  unsigned before[MAX_MODELS], i;

  for (i = 0; i < nmodels; i++)
    before[i] = reads_of (i);

  for (i = 0; i < n; i++) {
    uint64_t off = (uint64_t) (rand_r (seed) % (DATA_BYTES / READ_BYTES))
      * READ_BYTES;
    if (raid_read (a, buf, READ_BYTES, off) == -1 ||
        memcmp (buf, data + off, READ_BYTES) != 0) {
      fail ("read at %" PRIu64 " failed or differs", off);
      return -1;
    }
  }
  for (i = 0; i < nmodels; i++)
    got[i] += reads_of (i) - before[i];
  return 0;
}

/* The roles status (raid_get_status) says are slow, as a bitmask. */
static unsigned
status_slow_roles (struct raid_array *a)
{
  struct raid_status *st = malloc (sizeof *st);
  unsigned m, slow = 0;

  if (!st) {
    fail ("status: out of memory");
    return 0;
  }
  raid_get_status (a, st);
  for (m = 0; m < nmodels; m++)
    slow |= (unsigned)st->dev[m].slow << m;
  free (st);
  return slow;
}

/* Does status say role m is slow? */
static bool
status_slow (struct raid_array *a, unsigned m)
{
  return status_slow_roles (a) >> m & 1;
}

/* Member 1 2 ms slower: once both are measured, member 1 serves at
 * most a few reads in 100 (its probes), none is lost, and status calls
 * it slow, member 0 not. */
static void
slow_copy_read_little (struct raid_array *a, const uint8_t *data,
                       unsigned *seed)
{
  unsigned got[2] = { 0, 0 };

  set_delays (0, 2000);
  if (read_some (a, data, 600, seed, got) == -1)
    return;
  if (got[1] * 20 > got[0] + got[1])
    fail ("the copy 2 ms slower served %u of %u reads", got[1],
          got[0] + got[1]);
  else
    printf ("ok: the copy 2 ms slower served %u of %u reads\n", got[1],
            got[0] + got[1]);
  if (!status_slow (a, 1) || status_slow (a, 0))
    fail ("status does not say member 1 alone is slow");
  else
    printf ("ok: status says member 1 is slow\n");
}

/* The slow copy becomes as fast as the other: its probes bring its
 * average down and it shares the reads again, within 20 s; status no
 * longer calls it slow. */
static void
fast_again_shares (struct raid_array *a, const uint8_t *data,
                   unsigned *seed)
{
  uint64_t deadline = now_ns () + 20 * 1000000000ULL;
  unsigned got[2];

  set_delays (300, 300);
  do {
    got[0] = got[1] = 0;
    if (read_some (a, data, 100, seed, got) == -1)
      return;
  } while (got[1] < 30 && now_ns () < deadline);
  if (got[1] < 30)
    fail ("the copy that became fast serves %u of 100 reads", got[1]);
  else
    printf ("ok: the copy that became fast serves %u of 100 reads\n",
            got[1]);
  if (status_slow (a, 1))
    fail ("status still says the copy that became fast is slow");
}

/* Copies of one speed share the reads, by turn. */
static void
equal_copies_share (struct raid_array *a, const uint8_t *data,
                    unsigned *seed)
{
  unsigned got[2] = { 0, 0 };

  set_delays (300, 300);
  if (read_some (a, data, 300, seed, got) == -1)
    return;
  if (got[0] < 90 || got[1] < 90)
    fail ("copies of one speed served %u and %u of 300 reads", got[0],
          got[1]);
  else
    printf ("ok: copies of one speed served %u and %u of 300 reads\n",
            got[0], got[1]);
}

/* One read of a fast copy held up 5 ms (the thread preempted) does
 * not make it slow: the copies go on sharing the reads. */
static void
one_late_read_keeps_sharing (struct raid_array *a, const uint8_t *data,
                             unsigned *seed)
{
  unsigned got[2] = { 0, 0 };

  set_delays (0, 0);
  read_some (a, data, 200, seed, got);  /* both fast again */
  got[0] = got[1] = 0;
  __atomic_store_n (&models[0].once_us, 5000, __ATOMIC_RELAXED);
  if (read_some (a, data, 300, seed, got) == -1)
    return;
  if (got[0] < 90 || got[1] < 90)
    fail ("after one late read, the copies served %u and %u of 300 reads",
          got[0], got[1]);
  else
    printf ("ok: after one late read, the copies served %u and %u of 300 "
            "reads\n", got[0], got[1]);
}

/* Units above the resync front read from their first copy, slow or
 * not; a write-mostly copy is read only when no other can, however
 * fast. */
static void
rules_before_latency (struct raid_array *a, const uint8_t *data,
                      unsigned *seed)
{
  uint64_t front = __atomic_load_n (&a->resync_front, __ATOMIC_ACQUIRE);
  unsigned got[2] = { 0, 0 };

  set_delays (2000, 0);
  read_some (a, data, 50, seed, got);   /* member 0 known slow */
  got[0] = got[1] = 0;
  __atomic_store_n (&a->resync_front, 0, __ATOMIC_RELEASE);
  read_some (a, data, 50, seed, got);
  __atomic_store_n (&a->resync_front, front, __ATOMIC_RELEASE);
  if (got[1] != 0)
    fail ("unsynced units read from the second copy %u times", got[1]);
  else
    printf ("ok: unsynced units read from the first copy, slow as it is\n");

  got[0] = got[1] = 0;
  set_delays (0, 2000);
  read_some (a, data, 50, seed, got);   /* member 1 known slow */
  got[0] = got[1] = 0;
  a->slots[0].sb.devflags |= RAID_DEVFLAG_WRITE_MOSTLY;
  read_some (a, data, 100, seed, got);
  a->slots[0].sb.devflags &= ~RAID_DEVFLAG_WRITE_MOSTLY;
  if (got[0] != 0)
    fail ("the write-mostly copy served %u reads beside a slow one",
          got[0]);
  else
    printf ("ok: a slow copy is read before a write-mostly one\n");
}

/* n random reads (read_some), then more in rounds of 100 until status
 * says the roles in want, and they alone, are slow, for 10 s at most.
 * Copies of one speed may part for a moment on a busy machine (a
 * thread preempted over several reads, which a probe undoes): what is
 * tested is where the rule settles.  The slow roles last seen, or -1
 * (a read failed, reported). */
static int
read_until_slow (struct raid_array *a, const uint8_t *data, unsigned n,
                 unsigned *seed, unsigned *got, unsigned want)
{
  uint64_t deadline = now_ns () + 10 * 1000000000ULL;
  unsigned slow;

  if (read_some (a, data, n, seed, got) == -1)
    return -1;
  while ((slow = status_slow_roles (a)) != want && now_ns () < deadline)
    if (read_some (a, data, 100, seed, got) == -1)
      return -1;
  return (int)slow;
}

/* RAID1 of three, copy 2 remote (2 ms more a read): it alone is slow,
 * as it was beside the fastest of the array, and serves few reads. */
static void
remote_of_three_slow (struct raid_array *a, const uint8_t *data, unsigned *seed)
{
  unsigned got[MAX_MODELS] = { 0 }, all;
  int slow;

  set_delays_of ((const unsigned[]){ 0, 0, 2000 });
  slow = read_until_slow (a, data, 600, seed, got, 1u << 2);
  all = got[0] + got[1] + got[2];
  if (slow == -1)
    return;
  if (slow != 1 << 2)
    fail ("RAID1 of three, copy 2 remote: status says roles %#x are "
          "slow, not 0x4",
          (unsigned)slow);
  else if (got[2] * 20 > all)
    fail ("RAID1 of three: the remote copy served %u of %u reads", got[2], all);
  else
    printf ("ok: RAID1 of three: the remote copy alone is slow, served %u "
            "of %u reads\n",
            got[2], all);
}

/* RAID10 n2 of eight, pairs (0,1) (2,3) (4,5) (6,7): pair (2,3) both
 * ten times slower than the rest of the array, role 5 ten times
 * slower than its pair.  Only role 5 is slow: (2,3) share their reads
 * as equals, however far they are from the fastest of the array. */
static void
pairs_judged_apart (struct raid_array *a, const uint8_t *data, unsigned *seed)
{
  unsigned got[MAX_MODELS] = { 0 };
  int slow;

  set_delays_of (
      (const unsigned[]){ 200, 200, 2000, 2000, 200, 2000, 200, 200 });
  slow = read_until_slow (a, data, 600, seed, got, 1u << 5);
  if (slow == -1)
    return;
  if (slow != 1 << 5)
    fail ("RAID10 n2 of eight: status says roles %#x are slow, not 0x20 "
          "(role 5 alone)",
          (unsigned)slow);
  else
    printf ("ok: RAID10 n2 of eight: role 5 alone is slow, not the "
            "slow pair (2,3)\n");
  /* Role 5's share is its probes, up to one in 64 of all requests
   * (with pair (2,3) slow the reads take long enough for as many),
   * under a fifth of its pair's reads where sharing would give half. */
  if (got[2] < 30 || got[3] < 30 || got[5] * 5 > got[4] + got[5])
    fail ("RAID10 n2 of eight: roles 2 and 3 served %u and %u reads, "
          "5 served %u of %u",
          got[2], got[3], got[5], got[4] + got[5]);
  else
    printf ("ok: roles 2 and 3 served %u and %u reads, 5 served %u of "
            "%u\n",
            got[2], got[3], got[5], got[4] + got[5]);
}

/* Role 3 write-mostly, so without a read time to judge by: role 2, as
 * slow as before beside the array's fast pairs, has no partner to be
 * slow beside, and is not slow. */
static void
unmeasured_partner_not_slow (struct raid_array *a, const uint8_t *data,
                             unsigned *seed)
{
  unsigned got[MAX_MODELS] = { 0 };
  int slow;

  a->slots[3].sb.devflags |= RAID_DEVFLAG_WRITE_MOSTLY;
  slow = read_until_slow (a, data, 200, seed, got, 1u << 5);
  a->slots[3].sb.devflags &= ~RAID_DEVFLAG_WRITE_MOSTLY;
  if (slow == -1)
    return;
  if (slow != 1 << 5)
    fail ("RAID10 n2 of eight, role 3 write-mostly: status says roles "
          "%#x are slow, not 0x20 (role 5 alone)",
          (unsigned)slow);
  else
    printf ("ok: role 2, its pair write-mostly, is not slow\n");
}

typedef void test_case (struct raid_array *a, const uint8_t *data,
                        unsigned *seed);

/* Array name in dir, of members files with keys: data written at its
 * start, then each of the n cases run on it.  The models count the
 * reads of this array alone. */
static void
run_array (const char *dir, const char *name, const char *keys,
           unsigned members, const uint8_t *data, unsigned *seed,
           test_case *const *cases, size_t n)
{
  static const struct raid_create_options clean = { .assume_clean = true };
  struct raid_config cfg;
  struct raid_array *a;
  char err[1024];
  size_t i;

  a = test_array (dir, name, keys, members, MEMBER_BYTES, &clean, &cfg, err,
                  sizeof err);
  if (!a) {
    fail ("%s: %s", name, err);
    return;
  }
  if (raid_start (a) == -1)
    fail ("%s: raid_start", name);
  else if (raid_write (a, data, DATA_BYTES, 0, true) == -1)
    fail ("%s: write", name);
  else {
    model_wrap (a);
    for (i = 0; i < n; i++)
      cases[i](a, data, seed);
    model_unwrap ();
  }
  raid_close (a);
  raid_config_free (&cfg);
}

int
main (void)
{
  static test_case *const mirror[] = {
    slow_copy_read_little,       fast_again_shares,    equal_copies_share,
    one_late_read_keeps_sharing, rules_before_latency,
  };
  static test_case *const three[] = { remote_of_three_slow };
  static test_case *const raid10[] = {
    pairs_judged_apart,
    unmeasured_partner_not_slow,
  };
  char dir[] = "/tmp/nbdraid-test-read-latency.XXXXXX", cmd[600];
  uint8_t *data;
  unsigned seed = 1, i;

  if (!mkdtemp (dir)) {
    perror ("mkdtemp");
    return 1;
  }
  data = malloc (DATA_BYTES);
  if (!data)
    fail ("out of memory");
  else {
    for (i = 0; i < DATA_BYTES; i++)
      data[i] = (uint8_t) rand_r (&seed);
    run_array (dir, "mirror", "level = 1\n", 2, data, &seed, mirror,
               sizeof mirror / sizeof mirror[0]);
    run_array (dir, "three", "level = 1\n", 3, data, &seed, three,
               sizeof three / sizeof three[0]);
    run_array (dir, "raid10", "level = 10\nlayout = n2\nchunk = 64K\n", 8, data,
               &seed, raid10, sizeof raid10 / sizeof raid10[0]);
  }
  free (data);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "warning: could not remove %s\n", dir);
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
