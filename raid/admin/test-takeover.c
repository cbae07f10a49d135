/* nbdraid: the changes md makes without moving data, on arrays of
 * member files: raid_admin_takeover (RAID1 <-> RAID5 of two members,
 * RAID5 -> RAID6 with a spare built as Q, and back, RAID0 -> RAID4/5
 * with a spare built as parity, and back) and
 * raid_admin_grow_devices (a RAID1 given a third mirror, then back to
 * two once it was failed and removed).  After each the data reads
 * back, the background work runs to its end, a check finds nothing
 * wrong and the array takes new data.  Under valgrind too
 * (raid/test-valgrind.sh): roles and spares move, the level's state is
 * torn down and set up again.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test-array.h"
#include "test-report.h"

#define MEMBER_BYTES (4 * 1024 * 1024)

static unsigned checks;

/* Fill buf with bytes from seed. */
static void
randomise (uint8_t *buf, uint64_t len, unsigned seed)
{
  uint64_t i;

  for (i = 0; i < len; i++)
    buf[i] = (uint8_t)rand_r (&seed);
}

/* Run the background job until there is none. */
static void
run_jobs (struct raid_array *a)
{
  while (raid_job_step (a, RAID_JOB_STEP_MAX) == 1)
    ;
}

/* Add a blank file as a spare, NAME-spareK.img. */
static int
add_spare (struct raid_array *a, const char *dir, const char *name, unsigned k,
           char *err, size_t errlen)
{
  char path[512];
  int fd;

  snprintf (path, sizeof path, "%s/%s-spare%u.img", dir, name, k);
  fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd == -1 || ftruncate (fd, MEMBER_BYTES) == -1) {
    snprintf (err, errlen, "%s: %s", path, strerror (errno));
    if (fd != -1)
      close (fd);
    return -1;
  }
  close (fd);
  return raid_admin_add (a, path, err, errlen);
}

/* Which device holds each role, in order: words of want, each a member
 * number ("1": NAME-1.img) or "spare" (a spare added since). */
static int
check_roles (struct raid_array *a, const char *name, const char *want)
{
  struct raid_status *st = malloc (sizeof *st);
  const char *w = want;
  char word[32], expect[64];
  unsigned role = 0, i;
  int r = 0, used;

  if (!st)
    return -1;
  raid_get_status (a, st);
  for (; sscanf (w, "%31s%n", word, &used) == 1; w += used, role++) {
    snprintf (expect, sizeof expect, "/%s-%s", name, word);
    for (i = 0; i < st->ndevices && st->dev[i].role != (int)role; i++)
      ;
    if (i == st->ndevices || !strstr (st->dev[i].path, expect)) {
      fail ("%s: role %u is %s, not %s...", name, role,
            i == st->ndevices ? "empty" : st->dev[i].path, expect);
      r = -1;
    }
  }
  if (r == 0) {
    checks++;
    printf ("ok: %s: the roles hold %s\n", name, want);
  }
  free (st);
  return r;
}

/* After a change: the work it left done, a check clean, the old data
 * there, new data (seed) written and read back into data. */
static int
verify (struct raid_array *a, const char *what, uint8_t *data, uint8_t *back,
        unsigned seed)
{
  struct raid_status *st = malloc (sizeof *st);
  struct raid_shape shape;
  uint64_t size = raid_size (a);
  char err[1024];
  int r = -1;

  if (!st)
    return -1;
  run_jobs (a);
  if (raid_read (a, back, size, 0) == -1 || memcmp (back, data, size) != 0) {
    fail ("%s: the data does not read back", what);
    goto out;
  }
  /* A RAID0 has nothing to check. */
  raid_get_shape (a, &shape);
  if (shape.level != 0 && raid_job_check (a, false, 0, err, sizeof err) == -1) {
    fail ("%s: check: %s", what, err);
    goto out;
  }
  run_jobs (a);
  raid_get_status (a, st);
  if (!st->synced || st->mismatches
      || raid_status_working (st) != st->members) {
    fail ("%s: synced %d, %" PRIu64 " mismatches, %u of %u working", what,
          st->synced, st->mismatches, raid_status_working (st), st->members);
    goto out;
  }
  randomise (data, size / 2, seed);
  if (raid_write (a, data, size / 2, 0, true) == -1
      || raid_read (a, back, size, 0) == -1 || memcmp (back, data, size) != 0) {
    fail ("%s: new data does not read back", what);
    goto out;
  }
  checks++;
  printf ("ok: %s: RAID%d of %u members\n", what, st->level, st->members);
  r = 0;
out:
  free (st);
  return r;
}

/* Make the array, write data, then apply each step ("level 5",
 * "devices 3", "spare", "fail 2") in turn, verifying after each change. */
static int
run_case (const char *dir, const char *name, const char *array_keys,
          unsigned members, const char *const *steps)
{
  const struct raid_create_options clean = { .assume_clean = true };
  struct raid_config cfg;
  char err[1024], done[512], changed[4096], removed[512];
  uint8_t *data = NULL, *back = NULL;
  struct raid_array *a;
  unsigned seed = 1, spares = 0;
  int r = 1;

  a = test_array (dir, name, array_keys, members, MEMBER_BYTES, &clean, &cfg,
                  err, sizeof err);
  if (!a) {
    fail ("%s: %s", name, err);
    return 1;
  }
  data = malloc (MEMBER_BYTES * 4);
  back = malloc (MEMBER_BYTES * 4);
  if (!data || !back || raid_start (a) == -1)
    goto out;
  randomise (data, raid_size (a), seed);
  if (raid_write (a, data, raid_size (a), 0, true) == -1) {
    fail ("%s: write: %s", name, strerror (errno));
    goto out;
  }
  for (; *steps; steps++) {
    const char *arg = strchr (*steps, ' ') + 1;
    int s;

    if (strncmp (*steps, "refuse", 6) == 0) {
      if (raid_admin_takeover (a, arg, changed, sizeof changed, done,
                               sizeof done, err, sizeof err)
          == 0) {
        fail ("%s: %s was not refused", name, *steps);
        goto out;
      }
      checks++;
      continue;
    }
    if (strncmp (*steps, "level", 5) == 0)
      s = raid_admin_takeover (a, arg, changed, sizeof changed, done,
                               sizeof done, err, sizeof err);
    else if (strncmp (*steps, "devices", 7) == 0)
      s = raid_admin_grow_devices (a, arg, changed, sizeof changed, done,
                                   sizeof done, err, sizeof err);
    else if (strncmp (*steps, "roles", 5) == 0) {
      if (check_roles (a, name, arg) == -1)
        goto out;
      continue;
    }
    else if (strncmp (*steps, "spare", 5) == 0) {
      if (add_spare (a, dir, name, spares++, err, sizeof err) == -1) {
        fail ("%s: add: %s", name, err);
        goto out;
      }
      continue;
    }
    else {
      if (raid_admin_fail (a, arg, false, err, sizeof err) == -1
          || raid_admin_remove (a, arg, removed, sizeof removed, err,
                                sizeof err)
                 == -1) {
        fail ("%s: fail and remove %s: %s", name, arg, err);
        goto out;
      }
      continue;
    }
    if (s == -1) {
      fail ("%s: %s: %s", name, *steps, err);
      goto out;
    }
    if (verify (a, *steps, data, back, ++seed) == -1)
      goto out;
  }
  r = 0;
out:
  free (data);
  free (back);
  raid_close (a);
  raid_config_free (&cfg);
  return r;
}

int
main (void)
{
  static const char *const mirror_to_parity[] = { "level 5", "level 1", NULL };
  static const char *const mirrors[]
      = { "spare", "devices 3", "fail 2", "devices 2", NULL };
  /* Roles 0 and 2 of four emptied (spare0 had taken 2, spare1 3):
   * md's raid1_reshape moves 1 and 3 down to 0 and 1 and keeps the
   * empty role last, where spare2, added then, goes. */
  static const char *const compact[]
      = { "spare",  "spare", "devices 4", "fail 0",
          "fail 2", "spare", "devices 3", "roles 1 spare1 spare2",
          NULL };
  static const char *const parity_q[]
      = { "spare", "level 6", "level 5", "level 6", NULL };
  /* RAID0 to RAID4/5 and back, and a parity-last RAID5 to RAID6 and
   * back (Q after P, both last); a rotating RAID5 is no RAID0. */
  static const char *const striped_parity[]
      = { "refuse 5", "spare", "level 5", "level 4", "level 0", "level 4",
          "level 5",  "spare", "level 6", "level 5", "level 0", NULL };
  static const char *const rotating[] = { "refuse 0", "refuse 4", NULL };
  /* RAID0 to a near-2 RAID10 of twice as many (its members the even
   * roles), back with the mirrors spares, again, and back with a
   * mirror failed and removed (its pair's other device kept). */
  static const char *const striped_mirrors[]
      = { "spare",   "refuse 10",        "spare",
          "spare",   "level 10",         "roles 0 spare0 1 spare1 2 spare2",
          "level 0", "level 10",         "fail 2",
          "level 0", "roles 0 spare1 2", NULL };
  char dir[] = "/tmp/nbdraid-test-takeover.XXXXXX";
  char cmd[600];
  int failed = 0;

  if (!mkdtemp (dir)) {
    perror ("mkdtemp");
    return 1;
  }
  failed |= run_case (dir, "raid1-5", "level = 1\n", 2, mirror_to_parity);
  failed |= run_case (dir, "raid1-3", "level = 1\nbitmap = none\n", 2, mirrors);
  failed |= run_case (dir, "raid1-compact", "level = 1\nbitmap = none\n", 2,
                      compact);
  failed |= run_case (dir, "raid5-6", "level = 5\nchunk = 64K\n", 3, parity_q);
  failed |= run_case (dir, "raid0-4-5", "level = 0\nchunk = 64K\n", 3,
                      striped_parity);
  failed |= run_case (dir, "raid5-0", "level = 5\nchunk = 64K\n", 3, rotating);
  failed |= run_case (dir, "raid0-10", "level = 0\nchunk = 64K\n", 3,
                      striped_mirrors);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "warning: could not remove %s\n", dir);
  if (failed || failures)
    return EXIT_FAILURE;
  printf ("test-takeover: %u changes made and checked\n", checks);
  return EXIT_SUCCESS;
}
