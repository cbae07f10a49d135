/* nbdraid: what a rebuild writes, against the member it replaces.
 *
 * Parity arrays are filled with random data; then each member in turn
 * (and for RAID6 each pair) is treated as lost and its data area is
 * reconstructed from the others, over the whole area (several of the
 * reconstruction's windows), and over ranges that start and end off a
 * page.  The model is the member file itself: what the array wrote
 * there is exactly what a rebuild must put back.
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
    r = check_losses (dir, name, a);
  free (data);
  if (r == 0)
    printf ("ok: %s, every loss rebuilds each member's bytes\n", name);
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
