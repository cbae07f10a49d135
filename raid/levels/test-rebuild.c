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
 *
 * The same again on arrays written only here and there (created clean
 * on sparse files): where everything a piece is rebuilt from is a hole,
 * the recovery zeroes the spare there instead of reading, so the spare
 * (filled with garbage first) must still equal the member, and have
 * holes where the member has them.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "job.h"
#include "test-array.h"
#include "test-report.h"

#define MEMBER_FILE_BYTES (8 * 1024 * 1024)
/* The bitmap plays no part in what a rebuild writes. */
#define NO_BITMAP "bitmap = none\n"
/* Sparse arrays: a piece of data every SPARSE_EVERY bytes of the array,
 * so a member has whole rebuild pieces in holes between them. */
#define SPARSE_EVERY (4 * 1024 * 1024)
#define SPARSE_PIECE 100000
/* Members wider than a job step with data only at their start: a
 * recovery zeroes each window that is all holes in one call. */
#define WIDE_MEMBER_BYTES (40 * 1024 * 1024)
#define WIDE_EVERY (1024 * 1024 * 1024)

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
    fail ("%s: member %u at %" PRIu64 "+%" PRIu64
          ": reconstruct failed", name, m, off, len);
  else if (member_truth (dir, name, a, m, off, len, want) == -1)
    fail ("%s: member %u: cannot read its file", name, m);
  else if (memcmp (got, want, len) != 0)
    fail ("%s: member %u at %" PRIu64 "+%" PRIu64
          ": rebuilt bytes differ from the member's", name, m, off, len);
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
  const uint64_t area = a->geo.member_bytes;
  const uint64_t C = a->geo.chunk_bytes ? a->geo.chunk_bytes : 64 * 1024;
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

/* A spare file of bytes bytes, every one 0xee: a byte the recovery
 * fails to write shows. */
static int
garbage_spare (const char *path, uint64_t bytes)
{
  static uint8_t block[64 * 1024];
  uint64_t off;
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0600), ok = fd != -1;

  memset (block, 0xee, sizeof block);
  for (off = 0; ok && off < bytes; off += sizeof block)
    ok = pwrite (fd, block, sizeof block, off) == sizeof block;
  if (fd != -1)
    close (fd);
  return ok ? 0 : -1;
}

/* Does [off, off+len) of the file at fd contain a hole?  (Where the
 * filesystem has no holes, nothing does.) */
static bool
has_hole (int fd, uint64_t off, uint64_t len)
{
  off_t h = lseek (fd, (off_t) off, SEEK_HOLE);

  return h != -1 && (uint64_t) h < off + len;
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
  const uint64_t data_at = s->data_offset_bytes;
  int r = -1, step = 1, fd = -1, lost = -1;

  snprintf (path, sizeof path, "%s/%s-spare.img", dir, name);
  snprintf (role, sizeof role, "%u", m);
  if (!want || !got || member_truth (dir, name, a, m, 0, area, want) == -1 ||
      garbage_spare (path, s->io->size_bytes) == -1) {
    fail ("%s: cannot set up the recovery", name);
    goto out;
  }
  snprintf (path, sizeof path, "%s/%s-%u.img", dir, name, m);
  lost = open (path, O_RDONLY);
  snprintf (path, sizeof path, "%s/%s-spare.img", dir, name);
  if (raid_admin_fail (a, role, false, err, sizeof err) == -1 ||
      raid_admin_add (a, path, err, sizeof err) == -1) {
    fail ("%s: fail and add: %s", name, err);
    goto out;
  }
  while (step == 1)
    step = raid_job_step (a, RAID_JOB_STEP_MAX);
  if (step == -1 || slot_state (s) != SLOT_ACTIVE ||
      strcmp (s->path, path) != 0) {
    fail ("%s: the recovery of member %u did not end with "
          "the spare in its place", name, m);
    goto out;
  }
  fd = open (path, O_RDONLY);
  if (fd == -1 || lost == -1 ||
      pread (fd, got, area, data_at) != (ssize_t) area)
    fail ("%s: cannot read the spare back", name);
  else if (memcmp (got, want, area) != 0)
    fail ("%s: the spare's bytes differ from member %u's",
          name, m);
  else if (has_hole (lost, data_at, area) && !has_hole (fd, data_at, area))
    fail ("%s: member %u has holes, the spare rebuilt from "
          "the others none", name, m);
  else {
    checks++;
    r = 0;
  }
 out:
  if (fd != -1)
    close (fd);
  if (lost != -1)
    close (lost);
  free (want);
  free (got);
  return r;
}

/* A client writes, while member m is recovered, to a window of holes
 * the front has not reached: the recovery must rebuild what was written
 * there, not zero it as the holes it was.  The client's bytes read
 * back, and the spare holds what the other members say it should. */
static int
check_write_ahead (const char *dir, const char *name, struct raid_array *a,
                   unsigned m)
{
  const uint64_t len = 1024 * 1024, at = raid_size (a) / 8 * 7 / len * len;
  const uint64_t area = a->geo.member_bytes;
  const struct raid_slot *s = &a->slots[m];
  uint8_t *data = malloc (len), *back = malloc (len);
  uint8_t *want = malloc (area), *got = malloc (area);
  struct member_set gone = { { 0 } };
  struct scratch scratch = { NULL, 0 };
  char path[512], role[16], err[256];
  unsigned seed = 7;
  int r = -1, step, fd = -1;
  uint64_t i;

  snprintf (path, sizeof path, "%s/%s-spare-ahead.img", dir, name);
  snprintf (role, sizeof role, "%u", m);
  if (!data || !back || !want || !got ||
      garbage_spare (path, s->io->size_bytes) == -1 ||
      raid_admin_fail (a, role, false, err, sizeof err) == -1 ||
      raid_admin_add (a, path, err, sizeof err) == -1 ||
      raid_job_step (a, RAID_JOB_STEP_MAX) != 1) {
    fail ("%s: cannot start the recovery of member %u",
          name, m);
    goto out;
  }
  for (i = 0; i < len; i++)
    data[i] = (uint8_t) rand_r (&seed);
  if (raid_write (a, data, len, at, false) == -1) {
    fail ("%s: write at %" PRIu64 " failed", name, at);
    goto out;
  }
  while ((step = raid_job_step (a, RAID_JOB_STEP_MAX)) == 1)
    ;
  member_set_add (&gone, m);
  fd = open (path, O_RDONLY);
  if (step == -1 || slot_state (s) != SLOT_ACTIVE || fd == -1 ||
      raid_read (a, back, len, at) == -1 ||
      a->ops->reconstruct (a, m, 0, area, &gone, want, &scratch) == -1 ||
      pread (fd, got, area, s->data_offset_bytes) != (ssize_t) area)
    fail ("%s: the recovery of member %u, or reading it "
          "back, failed", name, m);
  else if (memcmp (back, data, len) != 0)
    fail ("%s: the bytes written during the recovery "
          "read back differently", name);
  else if (memcmp (got, want, area) != 0)
    fail ("%s: the spare's bytes differ from what the "
          "others say member %u holds", name, m);
  else {
    checks++;
    r = 0;
  }
 out:
  if (fd != -1)
    close (fd);
  scratch_free (&scratch);
  free (data);
  free (back);
  free (want);
  free (got);
  return r;
}

/* An empty file of a member's size at path (no superblock). */
static int
new_blank (const char *path)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  int r = fd == -1 ? -1 : ftruncate (fd, MEMBER_FILE_BYTES);

  if (fd != -1)
    close (fd);
  return r;
}

/* A long-running server sees devices come and go (a spare added and
 * removed, an NBD member that flaps and is re-added): each leaves its
 * device to be closed when the array is, however many there were.
 * More rounds than the 4 * RAID_MAX_MEMBERS the list once held, and
 * than its first growth. */
static int
check_spare_churn (const char *dir, const char *name, struct raid_array *a)
{
  const unsigned rounds = 4 * RAID_MAX_MEMBERS + 10;
  char path[512], removed[512], err[256];
  unsigned i;

  snprintf (path, sizeof path, "%s/%s-churn.img", dir, name);
  for (i = 0; i < rounds; i++)
    if (new_blank (path) == -1 ||
        raid_admin_add (a, path, err, sizeof err) == -1 ||
        raid_admin_remove (a, path, removed, sizeof removed, err,
                           sizeof err) == -1) {
      fail ("%s: spare churn, round %u: %s", name, i,
            err[0] ? err : strerror (errno));
      return -1;
    }
  if (strcmp (removed, path) != 0) {
    fail ("%s: remove reported %s, not %s", name,
          removed, path);
    return -1;
  }
  checks++;
  return 0;
}

/* A recovery checkpoints its front (recovery_offset in the superblocks)
 * once it is checkpoint_bytes past the last and a second has passed:
 * steps of 1 MiB (the checkpoint distance of these members) in quick
 * succession write none; the step after a second's pause does, at the
 * front; the recovery then ends with the spare in the role. */
static int
check_checkpoints (const char *dir, const char *name, struct raid_array *a,
                   unsigned m)
{
  const uint64_t MiB = 1024 * 1024;
  const struct raid_slot *s = &a->slots[m];
  char path[512], role[16], err[256];
  int i, step = 1;

  snprintf (path, sizeof path, "%s/%s-spare-ckpt.img", dir, name);
  snprintf (role, sizeof role, "%u", m);
  if (garbage_spare (path, s->io->size_bytes) == -1
      || raid_admin_fail (a, role, false, err, sizeof err) == -1
      || raid_admin_add (a, path, err, sizeof err) == -1) {
    fail ("%s: cannot start the recovery of member %u", name, m);
    return -1;
  }
  for (i = 0; i < 3 && step == 1; i++)
    step = raid_job_step (a, MiB);
  if (step != 1 || a->job.pos != 3 * MiB) {
    fail ("%s: three 1 MiB steps of the recovery ended at %" PRIu64
          " (step %d)",
          name, a->job.pos, step);
    return -1;
  }
  if (s->sb.recovery_offset_sectors != 0) {
    fail ("%s: 3 MiB into the recovery, within a second, the spare's "
          "superblock says %" PRIu64 " sectors, not 0 (no checkpoint)",
          name, (uint64_t)s->sb.recovery_offset_sectors);
    return -1;
  }
  nanosleep (&(struct timespec){ .tv_sec = REBUILD_CHECKPOINT_MS / 1000,
                                 .tv_nsec = (REBUILD_CHECKPOINT_MS % 1000 + 50)
                                            * 1000000 },
             NULL);
  if (raid_job_step (a, MiB) != 1
      || s->sb.recovery_offset_sectors * 512 != 4 * MiB) {
    fail ("%s: after a second's pause, a step to 4 MiB left the spare's "
          "superblock at %" PRIu64 " sectors, not the front",
          name, (uint64_t)s->sb.recovery_offset_sectors);
    return -1;
  }
  while ((step = raid_job_step (a, RAID_JOB_STEP_MAX)) == 1)
    ;
  if (step == -1 || slot_state (s) != SLOT_ACTIVE
      || strcmp (s->path, path) != 0) {
    fail ("%s: the recovery of member %u did not end with the spare in "
          "its place",
          name, m);
    return -1;
  }
  checks++;
  return 0;
}

/* Fill the array with random bytes: all of it (every 0), or a piece
 * every `every` bytes. */
static int
fill (struct raid_array *a, uint64_t every, unsigned seed)
{
  const uint64_t size = raid_size (a);
  const bool sparse = every > 0;
  const uint64_t step = sparse ? every : size;
  const uint64_t len = sparse ? SPARSE_PIECE : size;
  uint8_t *data = malloc (len);
  uint64_t off, i;
  int r = 0;

  if (!data)
    return -1;
  /* Pieces start off a page, so their stripes are written in part. */
  for (off = sparse ? 12345 : 0; off + len <= size && r == 0; off += step) {
    for (i = 0; i < len; i++)
      data[i] = (uint8_t) rand_r (&seed);
    r = raid_write (a, data, len, off, false);
  }
  free (data);
  return r == 0 ? raid_flush (a) : -1;
}

static int
run_case (const char *dir, const char *name, const char *array_keys,
          unsigned members, bool sparse)
{
  const struct raid_create_options clean = { .assume_clean = true };
  struct raid_config cfg;
  char err[1024];
  struct raid_array *a;
  int r = 1;

  a = test_array (dir, name, array_keys, members, MEMBER_FILE_BYTES,
                  sparse ? &clean : NULL, &cfg, err, sizeof err);
  if (!a) {
    fail ("%s: %s", name, err);
    return 1;
  }
  if (raid_start (a) == -1)
    goto out;
  if (fill (a, sparse ? SPARSE_EVERY : 0, members) == -1)
    fail ("%s: filling the array failed", name);
  else
    r = check_losses (dir, name, a)
        || check_recovery (dir, name, a, members - 2)
        || (members == 4 && check_spare_churn (dir, name, a))
        || (!sparse && a->geo.level == 5
            && check_checkpoints (dir, name, a, members - 1));
  if (r == 0)
    printf ("ok: %s, every loss rebuilds each member's bytes, a spare "
            "recovers one\n", name);
 out:
  raid_close (a);
  raid_config_free (&cfg);
  return r;
}

/* Recoveries of members with windows that are all holes: the spare,
 * full of garbage, must end as the lost member was. */
static int
run_wide_case (const char *dir, const char *name, const char *array_keys,
               unsigned members)
{
  const struct raid_create_options clean = { .assume_clean = true };
  struct raid_config cfg;
  char err[1024];
  struct raid_array *a;
  int r = 1;

  a = test_array (dir, name, array_keys, members, WIDE_MEMBER_BYTES, &clean,
                  &cfg, err, sizeof err);
  if (!a) {
    fail ("%s: %s", name, err);
    return 1;
  }
  if (raid_start (a) == -1)
    goto out;
  if (fill (a, WIDE_EVERY, members) == -1)
    fail ("%s: filling the array failed", name);
  else
    r = check_recovery (dir, name, a, members - 1) ||
      check_write_ahead (dir, name, a, members - 2);
  if (r == 0)
    printf ("ok: %s, a spare recovers a member with whole windows of "
            "holes, and what a client writes there meanwhile\n", name);
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
                      NO_BITMAP, 4, false);
  failed |= run_case (dir, "raid5-ra", "level = 5\nlayout = ra\n"
                      "chunk = 64K\n" NO_BITMAP, 5, false);
  failed |= run_case (dir, "raid6-ls", "level = 6\nchunk = 4K\n"
                      NO_BITMAP, 6, false);
  failed |= run_case (dir, "raid6-la", "level = 6\nlayout = la\n"
                      "chunk = 128K\n" NO_BITMAP, 5, false);
  failed |= run_case (dir, "raid10-n2", "level = 10\nchunk = 64K\n"
                      NO_BITMAP, 4, false);
  failed |= run_case (dir, "raid5-ls-sparse", "level = 5\nchunk = 16K\n"
                      NO_BITMAP, 4, true);
  failed |= run_case (dir, "raid6-la-sparse", "level = 6\nlayout = la\n"
                      "chunk = 128K\n" NO_BITMAP, 5, true);
  failed |= run_case (dir, "raid10-f2-sparse", "level = 10\nlayout = f2\n"
                      "chunk = 32K\n" NO_BITMAP, 5, true);
  failed |= run_case (dir, "raid1-sparse", "level = 1\n" NO_BITMAP, 3, true);
  failed |= run_wide_case (dir, "raid6-ls-wide", "level = 6\nchunk = 64K\n"
                           NO_BITMAP, 5);
  failed |= run_wide_case (dir, "raid10-n2-wide", "level = 10\nchunk = 64K\n"
                           NO_BITMAP, 4);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "warning: could not remove %s\n", dir);
  if (failed || failures)
    return EXIT_FAILURE;
  printf ("test-rebuild: %u ranges rebuilt exactly\n", checks);
  return EXIT_SUCCESS;
}
