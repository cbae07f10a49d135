/* nbdraid: a mirror reads its faster copy (read-latency.c).  RAID1 of
 * two member files, each read through a model that can add a delay to
 * every read and counts them: a copy 2 ms slower than the other serves
 * few reads, copies of one speed share them, even after one read held
 * up, a slow copy that became fast is read again (the probes), and
 * neither the initial sync's rule (units not yet synced read from the
 * first copy) nor write-mostly gives way to latency.
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

static struct model models[2];

static struct model *
model_of (const struct member *m)
{
  return m == models[0].tap.m ? &models[0] : &models[1];
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

  for (i = 0; i < 2; i++)
    member_tap (&models[i].tap, a->slots[i].io, model_pread);
}

static void
model_unwrap (void)
{
  unsigned i;

  for (i = 0; i < 2; i++)
    member_untap (&models[i].tap);
}

static void
set_delays (unsigned us0, unsigned us1)
{
  __atomic_store_n (&models[0].delay_us, us0, __ATOMIC_RELAXED);
  __atomic_store_n (&models[1].delay_us, us1, __ATOMIC_RELAXED);
}

static unsigned
reads_of (unsigned i)
{
  return __atomic_load_n (&models[i].reads, __ATOMIC_RELAXED);
}

/* n random 4K reads of the data, each checked against it; adds the
 * reads each member served to got[].  0, or -1 (reported). */
static int
read_some (struct raid_array *a, const uint8_t *data, unsigned n,
           unsigned *seed, unsigned got[2])
{
  uint8_t buf[READ_BYTES];
  unsigned before[2] = { reads_of (0), reads_of (1) }, i;

  for (i = 0; i < n; i++) {
    uint64_t off = (uint64_t) (rand_r (seed) % (DATA_BYTES / READ_BYTES))
      * READ_BYTES;
    if (raid_read (a, buf, READ_BYTES, off) == -1 ||
        memcmp (buf, data + off, READ_BYTES) != 0) {
      fail ("read at %" PRIu64 " failed or differs", off);
      return -1;
    }
  }
  got[0] += reads_of (0) - before[0];
  got[1] += reads_of (1) - before[1];
  return 0;
}

/* Does status (raid_get_status) say role m is slow? */
static bool
status_slow (struct raid_array *a, unsigned m)
{
  struct raid_status *st = malloc (sizeof *st);
  bool slow;

  if (!st) {
    fail ("status: out of memory");
    return false;
  }
  raid_get_status (a, st);
  slow = st->dev[m].slow;
  free (st);
  return slow;
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

int
main (void)
{
  char dir[] = "/tmp/nbdraid-test-read-latency.XXXXXX";
  static const struct raid_create_options clean = { .assume_clean = true };
  struct raid_config cfg;
  struct raid_array *a;
  char err[1024], cmd[600];
  uint8_t *data;
  unsigned seed = 1, i;

  if (!mkdtemp (dir)) {
    perror ("mkdtemp");
    return 1;
  }
  a = test_array (dir, "mirror", "level = 1\n", 2, MEMBER_BYTES, &clean,
                  &cfg, err, sizeof err);
  data = malloc (DATA_BYTES);
  if (!a || !data)
    fail ("mirror: %s", a ? "out of memory" : err);
  else if (raid_start (a) == -1)
    fail ("mirror: raid_start");
  else {
    for (i = 0; i < DATA_BYTES; i++)
      data[i] = (uint8_t) rand_r (&seed);
    if (raid_write (a, data, DATA_BYTES, 0, true) == -1)
      fail ("mirror: write");
    else {
      model_wrap (a);
      slow_copy_read_little (a, data, &seed);
      fast_again_shares (a, data, &seed);
      equal_copies_share (a, data, &seed);
      one_late_read_keeps_sharing (a, data, &seed);
      rules_before_latency (a, data, &seed);
      model_unwrap ();
    }
  }
  if (a) {
    raid_close (a);
    raid_config_free (&cfg);
  }
  free (data);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "warning: could not remove %s\n", dir);
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
