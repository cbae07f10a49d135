/* nbdraid: what a rebuild writes, against the member it replaces.
 *
 * Parity arrays are filled with random data; then each member in turn
 * (and for RAID6 each pair) is treated as lost and its data area is
 * reconstructed from the others, over the whole area (several of the
 * reconstruction's windows), and over ranges that start and end off a
 * page.  The model is the member file itself: what the array wrote
 * there is exactly what a rebuild must put back.  Then one member is
 * failed and recovered onto a spare through the background job, which
 * must leave the spare equal to the member it replaced.
 */
#include <config.h>

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "test-array.h"

#define MEMBER_FILE_BYTES (8 * 1024 * 1024)
/* The bitmap plays no part in what a rebuild writes. */
#define NO_BITMAP "bitmap = none\n"

static unsigned checks;

/* Member m's data area [off, off+len), read from its file. */
static int
member_truth (const char *dir, const char *name, struct raid_array *a,
              unsigned m, uint64_t off, uint64_t len, uint8_t *out)
{
  char path[512];
  int fd, ok;

  snprintf (path, sizeof path, "%s/%s-%u.img", dir, name, m);
  fd = open (path, O_RDONLY);
  if (fd == -1)
    return -1;
  ok = pread (fd, out, len, a->slots[m].data_offset_bytes + off)
    == (ssize_t) len;
  close (fd);
  return ok ? 0 : -1;
}

/* Lose the members in gone, rebuild m's [off, off+len), compare. */
static int
check_range (const char *dir, const char *name, struct raid_array *a,
             unsigned m, const struct member_set *gone, uint64_t off,
             uint64_t len, struct scratch *scratch)
{
  uint8_t *got = malloc (len), *want = malloc (len);
  int r = -1;

  if (!got || !want)
    goto out;
  memset (got, 0xee, len);
  if (a->ops->reconstruct (a, m, off, len, gone, got, scratch) == -1)
    fprintf (stderr, "FAIL: %s: member %u at %" PRIu64 "+%" PRIu64
             ": reconstruct failed\n", name, m, off, len);
  else if (member_truth (dir, name, a, m, off, len, want) == -1)
    fprintf (stderr, "FAIL: %s: member %u: cannot read its file\n", name, m);
  else if (memcmp (got, want, len) != 0)
    fprintf (stderr, "FAIL: %s: member %u at %" PRIu64 "+%" PRIu64
             ": rebuilt bytes differ from the member's\n", name, m, off, len);
  else {
    checks++;
    r = 0;
  }
 out:
  free (got);
  free (want);
  return r;
}

/* Every single loss, and for RAID6 every pair, each over the whole data
 * area and two unaligned ranges (one across a chunk boundary). */
static int
check_losses (const char *dir, const char *name, struct raid_array *a)
{
  const unsigned n = a->geo.members;
  const uint64_t area = a->geo.member_bytes, C = a->geo.chunk_bytes;
  const uint64_t ranges[][2] = {
    { 0, area }, { 1000, 7777 }, { C - 513, 2 * C + 1030 },
  };
  struct scratch scratch = { NULL, 0 };
  unsigned m, other, i;
  int failed = 0;

  for (m = 0; m < n; m++)
    for (other = m; other < (a->geo.parity_members == 2 ? n : m + 1);
         other++) {
      struct member_set gone = { { 0 } };

      member_set_add (&gone, m);
      member_set_add (&gone, other);
      for (i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        failed |= check_range (dir, name, a, m, &gone, ranges[i][0],
                               ranges[i][1], &scratch);
    }
  scratch_free (&scratch);
  return failed;
}

/* A spare file of the members' size, every byte 0xee: a byte the
 * recovery fails to write shows. */
static int
garbage_spare (const char *path)
{
  static uint8_t block[64 * 1024];
  uint64_t off;
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0600), ok = fd != -1;

  memset (block, 0xee, sizeof block);
  for (off = 0; ok && off < MEMBER_FILE_BYTES; off += sizeof block)
    ok = pwrite (fd, block, sizeof block, off) == sizeof block;
  if (fd != -1)
    close (fd);
  return ok ? 0 : -1;
}

/* The whole path a lost member takes, through the job (its pieces and
 * workers): fail member m, add a spare, step the recovery to its end;
 * the spare must then hold exactly what m held. */
static int
check_recovery (const char *dir, const char *name, struct raid_array *a,
                unsigned m)
{
  const uint64_t area = a->geo.member_bytes;
  uint8_t *want = malloc (area), *got = malloc (area);
  char path[512], role[16], err[256];
  const struct raid_slot *s = &a->slots[m];
  int r = -1, step = 1, fd = -1;

  snprintf (path, sizeof path, "%s/%s-spare.img", dir, name);
  snprintf (role, sizeof role, "%u", m);
  if (!want || !got || member_truth (dir, name, a, m, 0, area, want) == -1 ||
      garbage_spare (path) == -1) {
    fprintf (stderr, "FAIL: %s: cannot set up the recovery\n", name);
    goto out;
  }
  if (raid_admin_fail (a, role, false, err, sizeof err) == -1 ||
      raid_admin_add (a, path, err, sizeof err) == -1) {
    fprintf (stderr, "FAIL: %s: fail and add: %s\n", name, err);
    goto out;
  }
  while (step == 1)
    step = raid_job_step (a, RAID_JOB_STEP_MAX);
  if (step == -1 || slot_state (s) != SLOT_ACTIVE ||
      strcmp (s->path, path) != 0) {
    fprintf (stderr, "FAIL: %s: the recovery of member %u did not end with "
             "the spare in its place\n", name, m);
    goto out;
  }
  fd = open (path, O_RDONLY);
  if (fd == -1 || pread (fd, got, area, s->data_offset_bytes) != (ssize_t) area)
    fprintf (stderr, "FAIL: %s: cannot read the spare back\n", name);
  else if (memcmp (got, want, area) != 0)
    fprintf (stderr, "FAIL: %s: the spare's bytes differ from member %u's\n",
             name, m);
  else {
    checks++;
    r = 0;
  }
 out:
  if (fd != -1)
    close (fd);
  free (want);
  free (got);
  return r;
}

static int
run_case (const char *dir, const char *name, const char *array_keys,
          unsigned members)
{
  struct raid_config cfg;
  struct raid_array *a;
  uint8_t *data;
  uint64_t size, i;
  unsigned seed = members;
  int r = 1;

  a = test_array (dir, name, array_keys, members, MEMBER_FILE_BYTES, &cfg);
  if (!a)
    return 1;
  if (raid_start (a) == -1)
    goto out;
  size = raid_size (a);
  data = malloc (size);
  for (i = 0; i < size; i++)
    data[i] = (uint8_t) rand_r (&seed);
  if (raid_write (a, data, size, 0, false) == -1 || raid_flush (a) == -1)
    fprintf (stderr, "FAIL: %s: filling the array failed\n", name);
  else
    r = check_losses (dir, name, a) ||
      check_recovery (dir, name, a, members - 2);
  free (data);
  if (r == 0)
    printf ("ok: %s, every loss rebuilds each member's bytes, a spare "
            "recovers one\n", name);
 out:
  raid_close (a);
  raid_config_free (&cfg);
  return r;
}

int
main (void)
{
  char dir[] = "/tmp/nbdraid-test-rebuild.XXXXXX";
  char cmd[600];
  int failed = 0;

  if (!mkdtemp (dir)) {
    perror ("mkdtemp");
    return 1;
  }
  failed |= run_case (dir, "raid5-ls", "level = 5\nchunk = 16K\n"
                      NO_BITMAP, 4);
  failed |= run_case (dir, "raid5-ra", "level = 5\nlayout = ra\n"
                      "chunk = 64K\n" NO_BITMAP, 5);
  failed |= run_case (dir, "raid6-ls", "level = 6\nchunk = 4K\n"
                      NO_BITMAP, 6);
  failed |= run_case (dir, "raid6-la", "level = 6\nlayout = la\n"
                      "chunk = 128K\n" NO_BITMAP, 5);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "warning: could not remove %s\n", dir);
  if (!failed)
    printf ("test-rebuild: %u ranges rebuilt exactly\n", checks);
  return failed;
}
