/* nbdraid: raid_admin_grow on arrays of member files that grew, with
 * and without a bitmap: the array serves the new size, the old bytes
 * read back, the resync of the new space runs to its end and a check
 * after it finds nothing wrong, even where the bigger members held old
 * bytes; the new space takes data.  Under valgrind too
 * (raid/test-valgrind.sh): the bitmap's arrays are replaced.
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

#define OLD_BYTES (4 * 1024 * 1024)
#define NEW_BYTES (7 * 1024 * 1024)
#define NO_BITMAP "bitmap = none\n"
#define TAIL_BYTES (256 * 1024)

static unsigned checks;

/* Fill buf with bytes from seed. */
static void
randomise (uint8_t *buf, uint64_t len, unsigned seed)
{
  uint64_t i;

  for (i = 0; i < len; i++)
    buf[i] = (uint8_t) rand_r (&seed);
}

/* Make each member file NEW_BYTES long, with old bytes (not zeros) at
 * the start of the new space of the first one (a RAID1 whose end was
 * not a whole 128K unit has them in its last old unit). */
static int
grow_files (const char *dir, const char *name, unsigned members,
            uint64_t old_bytes)
{
  char path[512];
  uint8_t junk[65536];
  unsigned m;
  int fd, r = 0;

  randomise (junk, sizeof junk, 7);
  for (m = 0; m < members && r == 0; m++) {
    snprintf (path, sizeof path, "%s/%s-%u.img", dir, name, m);
    fd = open (path, O_WRONLY | O_CLOEXEC);
    r = fd == -1 || ftruncate (fd, NEW_BYTES) == -1 ||
      (m == 0 && pwrite (fd, junk, sizeof junk, (off_t) old_bytes)
       != (ssize_t) sizeof junk) ? -1 : 0;
    if (fd != -1)
      close (fd);
  }
  return r;
}

/* Run the background job until there is none. */
static void
run_jobs (struct raid_array *a)
{
  while (raid_job_step (a, RAID_JOB_STEP_MAX) == 1)
    ;
}

static int
run_case (const char *dir, const char *name, const char *array_keys,
          unsigned members, uint64_t old_bytes)
{
  const struct raid_create_options clean = { .assume_clean = true };
  struct raid_config cfg;
  struct raid_status *st = malloc (sizeof *st);
  char err[1024], done[512];
  uint64_t old_size, new_size;
  uint8_t *data = NULL, *back = NULL;
  struct raid_array *a;
  int r = 1;

  a = test_array (dir, name, array_keys, members, old_bytes, &clean, &cfg,
                  err, sizeof err);
  if (!a || !st) {
    fail ("%s: %s", name, a ? "out of memory" : err);
    free (st);
    return 1;
  }
  if (raid_start (a) == -1)
    goto out;
  old_size = raid_size (a);
  data = malloc (NEW_BYTES * members);
  back = malloc (NEW_BYTES * members);
  if (!data || !back)
    goto out;
  /* The last 256K left as created (zeros, no bit set): a grow must not
   * count on a bit the old data's writes left there. */
  randomise (data, old_size - TAIL_BYTES, members);
  memset (data + old_size - TAIL_BYTES, 0, TAIL_BYTES);
  if (raid_write (a, data, old_size - TAIL_BYTES, 0, true) == -1) {
    fail ("%s: write: %s", name, strerror (errno));
    goto out;
  }
  if (raid_admin_grow (a, "max", done, sizeof done, err, sizeof err) == 0) {
    fail ("%s: grow with nothing grown accepted", name);
    goto out;
  }
  if (grow_files (dir, name, members, old_bytes) == -1 ||
      raid_admin_grow (a, "max", done, sizeof done, err, sizeof err) == -1) {
    fail ("%s: grow: %s", name, err);
    goto out;
  }
  new_size = raid_size (a);
  if (new_size <= old_size) {
    fail ("%s: size %" PRIu64 " after the grow, was %" PRIu64, name,
          new_size, old_size);
    goto out;
  }
  run_jobs (a);
  if (raid_job_check (a, false, 0, err, sizeof err) == -1) {
    fail ("%s: check: %s", name, err);
    goto out;
  }
  run_jobs (a);
  raid_get_status (a, st);
  if (!st->synced || st->mismatches) {
    fail ("%s: after the resync: synced %d, %" PRIu64 " mismatches", name,
          st->synced, st->mismatches);
    goto out;
  }
  randomise (data + old_size, new_size - old_size, 99);
  if (raid_read (a, back, old_size, 0) == -1 ||
      memcmp (back, data, old_size) != 0) {
    fail ("%s: the old bytes do not read back", name);
    goto out;
  }
  if (raid_write (a, data + old_size, new_size - old_size, old_size, true)
      == -1 || raid_read (a, back, new_size, 0) == -1 ||
      memcmp (back, data, new_size) != 0) {
    fail ("%s: the new space does not read back", name);
    goto out;
  }
  checks++;
  printf ("ok: %s grew from %" PRIu64 " to %" PRIu64 " bytes\n", name,
          old_size, new_size);
  r = 0;
 out:
  free (data);
  free (back);
  free (st);
  raid_close (a);
  raid_config_free (&cfg);
  return r;
}

int
main (void)
{
  char dir[] = "/tmp/nbdraid-test-grow.XXXXXX";
  char cmd[600];
  int failed = 0;

  if (!mkdtemp (dir)) {
    perror ("mkdtemp");
    return 1;
  }
  failed |= run_case (dir, "raid1", "level = 1\n", 2, OLD_BYTES);
  /* The last 128K unit half past the old end, bitmap chunks of 64K. */
  failed |= run_case (dir, "raid1-half-unit", "level = 1\n"
                      "bitmap-chunk = 64K\n", 2, OLD_BYTES + 65536);
  failed |= run_case (dir, "raid1-nobitmap", "level = 1\n" NO_BITMAP, 3,
                      OLD_BYTES);
  failed |= run_case (dir, "raid5", "level = 5\nchunk = 16K\n"
                      "bitmap-chunk = 64K\n", 4, OLD_BYTES);
  failed |= run_case (dir, "raid6", "level = 6\nchunk = 64K\n" NO_BITMAP, 5,
                      OLD_BYTES);
  failed |= run_case (dir, "raid10-n2", "level = 10\nchunk = 64K\n"
                      "bitmap-chunk = 64K\n", 4, OLD_BYTES);
  failed |= run_case (dir, "raid10-o2", "level = 10\nlayout = o2\n"
                      "chunk = 32K\n", 3, OLD_BYTES);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "warning: could not remove %s\n", dir);
  if (failed || failures)
    return EXIT_FAILURE;
  printf ("test-grow: %u arrays grew\n", checks);
  return EXIT_SUCCESS;
}
