/* nbdraid: grow --raid-devices on a RAID0 (through RAID4, as md), a
 * RAID5 and a RAID6 (a reshape from 4 to 5 members), with and without
 * a bitmap, grow --chunk (larger and smaller) and --layout, and
 * --level 6 --layout of a RAID5 (its spare the fresh Q); and fewer
 * members (5 to 4, 6 to 5, md's backwards reshape), refused until
 * grow --array-size cuts the array to what they hold, a RAID6 losing
 * a member it keeps and one it drops mid-way:
 * mid-way, reads and writes on both sides of
 * the front give back what was written; the array stopped there
 * assembles again mid-reshape at its old size, the reshape resumes and
 * ends with the array bigger (a third, a half) or as big, the data in
 * place, the new space zeros and a check clean.  A RAID6 that loses
 * two members mid-way goes on without them to the same end.  Under
 * valgrind too (raid/test-valgrind.sh).
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

#include "superblock.h"
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

/* How far the job is, in bytes of each member. */
static uint64_t
job_done (struct raid_array *a, enum raid_job_kind *kind)
{
  uint64_t done, total;

  raid_job_progress (a, kind, &done, &total);
  return done;
}

/* Does the whole array read back as want (size bytes)? */
static int
reads_back (struct raid_array *a, const char *what, const uint8_t *want,
            uint64_t size)
{
  uint8_t *back = malloc (size);
  int r = -1;

  if (back && raid_read (a, back, size, 0) == 0
      && memcmp (back, want, size) == 0)
    r = 0;
  else
    fail ("%s: the data does not read back", what);
  free (back);
  return r;
}

/* Writes of odd lengths at odd places, on both sides of the front. */
static int
scatter_writes (struct raid_array *a, const char *what, uint8_t *data,
                uint64_t size)
{
  unsigned seed = 5, i;

  for (i = 0; i < 40; i++) {
    uint64_t len = 1 + (uint64_t)rand_r (&seed) % 100000;
    uint64_t off = (uint64_t)rand_r (&seed) * 4099 % (size - len);
    randomise (data + off, len, i);
    if (raid_write (a, data + off, len, off, i % 3 == 0) == -1) {
      fail ("%s: write at %" PRIu64 ": %s", what, off, strerror (errno));
      return -1;
    }
  }
  return 0;
}

/* name.conf again with n members (the spare as the fifth) and the
 * devices up to `all` as spares, as nbdraid grow leaves it; assembled
 * and started. */
static struct raid_array *
reassemble (const char *dir, const char *name, const char *keys, unsigned n,
            unsigned all, struct raid_config *cfg, char *err, size_t errlen)
{
  struct raid_options ao = { 0 };
  struct raid_array *a;
  char conf[512];
  unsigned m;
  FILE *fp;

  snprintf (conf, sizeof conf, "%s/%s.conf", dir, name);
  fp = fopen (conf, "w");
  if (!fp)
    return NULL;
  fprintf (fp, "[array]\n%s[members]\n", keys);
  for (m = 0; m < all; m++)
    fprintf (fp, "%s = %s/%s-%u.img\n", m < n ? "member" : "spare", dir, name,
             m);
  fclose (fp);
  if (raid_config_load (conf, cfg, err, errlen) == -1)
    return NULL;
  a = raid_assemble (cfg, &ao, err, errlen);
  if (a && raid_start (a) == -1) {
    raid_close (a);
    a = NULL;
  }
  return a;
}

/* Fail the roles listed in fails ("1,3"; "" none). */
static int
fail_roles (struct raid_array *a, const char *name, const char *fails)
{
  char role[8], err[512];
  const char *p;

  for (p = fails; *p; p += strcspn (p, ",") + (p[strcspn (p, ",")] != 0)) {
    snprintf (role, sizeof role, "%.*s", (int)strcspn (p, ","), p);
    if (raid_admin_fail (a, role, true, err, sizeof err) == -1) {
      fail ("%s: fail %s: %s", name, role, err);
      return -1;
    }
  }
  return 0;
}

/* A reshape of a 4-member array (`from`, if not 0) of `keys` with
 * old_data data members (0: a RAID10 of two copies): grow `option`
 * `value` (--raid-devices 5 or
 * fewer, --chunk, --layout), the roles in `fails` failed half-way; its
 * config is `after` then. */
struct reshape_case {
  const char *name, *keys, *after;
  unsigned old_data;
  const char *option, *value, *fails;
  unsigned from;
};

/* Devices st shows as spares. */
static unsigned
spares_in (const struct raid_status *st)
{
  unsigned i, n = 0;

  for (i = 0; i < st->ndevices; i++)
    n += st->dev[i].state == RAID_DEV_SPARE && st->dev[i].role == -1;
  return n;
}

/* Roles in fails ("1,5") below n. */
static unsigned
failed_below (const char *fails, unsigned n)
{
  unsigned count = 0;
  const char *p;

  for (p = fails; *p; p += strcspn (p, ",") + (p[strcspn (p, ",")] != 0))
    count += (unsigned)atoi (p) < n;
  return count;
}

/* Device dev of the case's array (dir/name-dev.img): its superblock
 * block, read (write false) or written. */
static int
sb_io (const char *dir, const char *name, unsigned dev, struct md_superblock *sb,
       bool write)
{
  uint8_t block[MD_SB_BLOCK_BYTES] = { 0 };
  char path[512], err[256];
  bool no_magic;
  int fd, r = -1;

  snprintf (path, sizeof path, "%s/%s-%u.img", dir, name, dev);
  fd = open (path, O_RDWR | O_CLOEXEC);
  if (fd == -1)
    return -1;
  if (write) {
    md_sb_encode (sb, block);
    r = pwrite (fd, block, sizeof block, MD_SB_OFFSET_BYTES) == sizeof block
            ? 0 : -1;
  }
  else if (pread (fd, block, sizeof block, MD_SB_OFFSET_BYTES) == sizeof block)
    r = md_sb_decode (block, sb, &no_magic, err, sizeof err);
  close (fd);
  return r;
}

/* Device dev, dropped by a shrink by `moved` sectors, as if it missed
 * the reshape's last superblock write: one event behind, still in its
 * role (dev: the devices are in role order) with the reshape's fields
 * and its old data offset.  The next assembly takes it for a spare and
 * settles it: its next superblock has the array's data offset and no
 * reshape.  -1 (and a failure said) if not. */
static int
lagging_spare_settles (const char *dir, const char *name, const char *keys,
                       unsigned dev, unsigned members, uint32_t moved,
                       struct raid_config *cfg)
{
  struct md_superblock sb, kept;
  struct raid_array *a;
  char err[1024];

  if (sb_io (dir, name, dev, &sb, false) == -1)
    return -1;
  sb.events--;
  sb.feature_map |= MD_FEATURE_RESHAPE | MD_FEATURE_NEW_OFFSET;
  sb.new_offset = moved;
  sb.delta_disks = (uint32_t)-1;
  sb.reshape_position = 0;
  sb.new_level = (uint32_t)sb.level;
  sb.new_layout = sb.layout;
  sb.new_chunk = sb.chunk_sectors;
  sb.data_offset_sectors -= moved;
  sb.dev_roles[sb.dev_number] = (uint16_t)dev;
  if (sb_io (dir, name, dev, &sb, true) == -1)
    return -1;
  raid_config_free (cfg);
  a = reassemble (dir, name, keys, members, dev + 1, cfg, err, sizeof err);
  /* A write dirties the array: every superblock is written, twice. */
  if (!a || raid_write (a, "x", 1, 0, true) == -1) {
    fail ("%s: a dropped device one event behind: %s", name, a ? "" : err);
    raid_close (a);
    return -1;
  }
  raid_close (a);
  if (sb_io (dir, name, dev, &sb, false) == -1
      || sb_io (dir, name, 0, &kept, false) == -1
      || sb.feature_map & (MD_FEATURE_RESHAPE | MD_FEATURE_NEW_OFFSET)
      || sb.data_offset_sectors != kept.data_offset_sectors
      || sb.events != kept.events) {
    fail ("%s: the dropped device one event behind did not settle: feature "
          "map 0x%x, data offset %" PRIu64 " (the array's %" PRIu64 ")",
          name, sb.feature_map, sb.data_offset_sectors,
          kept.data_offset_sectors);
    return -1;
  }
  return 0;
}

/* Start the reshape the case asks for. */
static int
start_reshape (struct raid_array *a, const struct reshape_case *k, char *err,
               size_t errlen)
{
  char done[512], changed[1024];

  if (strcmp (k->option, "--raid-devices") == 0)
    return raid_admin_grow_devices (a, k->value, changed, sizeof changed, done,
                                    sizeof done, err, errlen);
  if (strcmp (k->option, "--level") == 0) /* 6, into layout value */
    return raid_admin_grow_raid6 (a, k->value, changed, sizeof changed, done,
                                  sizeof done, err, errlen);
  return raid_admin_grow_shape (a, k->option, k->value, done, sizeof done, err,
                                errlen);
}

/* The bytes the case's array holds with n members giving mb bytes
 * each: a RAID10 of two copies holds half its members' chunks. */
static uint64_t
holds (const struct reshape_case *k, unsigned n, uint64_t mb)
{
  const uint64_t chunk = (uint64_t)atoi (strstr (k->keys, "chunk = ") + 8) * 1024;
  unsigned from = k->from ? k->from : 4;

  if (k->old_data == 0)
    return mb / chunk * n / 2 * chunk;
  return mb * (k->old_data - (from - n));
}

/* The bytes each member of the case's array gives it, holding size. */
static uint64_t
member_bytes (const struct reshape_case *k, uint64_t size)
{
  unsigned from = k->from ? k->from : 4;

  return k->old_data ? size / k->old_data : size * 2 / from;
}

/* A shrink is refused while the array is bigger than its fewer members
 * hold (each giving a chunk less: the data moves up one, and the files
 * have no room past it); cut to that size, it starts.  *new_size gets
 * it. */
static int
start_shrink (struct raid_array *a, const struct reshape_case *k,
              uint64_t *new_size, char *err, size_t errlen)
{
  const uint64_t chunk = (uint64_t)atoi (strstr (k->keys, "chunk = ") + 8) * 1024;
  const unsigned lost = k->from - (unsigned)atoi (k->value);
  char size[32], done[512];

  *new_size = holds (k, k->from - lost, member_bytes (k, raid_size (a)) - chunk);
  if (start_reshape (a, k, err, errlen) == 0 || !strstr (err, "--array-size")) {
    fail ("%s: a shrink of the whole array: %s", k->name,
          err[0] ? err : "not refused");
    return -1;
  }
  snprintf (size, sizeof size, "%" PRIu64, *new_size);
  if (raid_admin_array_size (a, size, done, sizeof done, err, errlen) == -1)
    return -1;
  if (raid_size (a) != *new_size) {
    snprintf (err, errlen, "array-size: serves %" PRIu64 ", not %s",
              raid_size (a), size);
    return -1;
  }
  return start_reshape (a, k, err, errlen);
}

static int
run_case (const char *dir, const struct reshape_case *k)
{
  const char *name = k->name, *keys = k->keys, *fails = k->fails;
  const bool devices = strcmp (k->option, "--raid-devices") == 0;
  const bool to_raid6 = strcmp (k->option, "--level") == 0;
  const unsigned from = k->from ? k->from : 4;
  const unsigned members = devices ? (unsigned)atoi (k->value)
                           : to_raid6 ? 5
                                      : 4;
  const bool shrink = members < from, more = devices && !shrink;
  const unsigned working = members - failed_below (fails, members);
  const struct raid_create_options clean = { .assume_clean = true };
  struct raid_config cfg, cfg2;
  struct raid_status *st = malloc (sizeof *st);
  char err[1024], path[512];
  enum raid_job_kind kind;
  uint64_t old_size, new_size;
  uint8_t *data = NULL;
  struct raid_array *a;
  int r = 1, fd;

  a = test_array (dir, name, keys, from, MEMBER_BYTES, &clean, &cfg, err,
                  sizeof err);
  if (!a || !st) {
    fail ("%s: %s", name, a ? "out of memory" : err);
    free (st);
    return 1;
  }
  memset (&cfg2, 0, sizeof cfg2);
  if (raid_start (a) == -1)
    goto out;
  old_size = raid_size (a);
  new_size = more ? holds (k, members, member_bytes (k, old_size)) : old_size;
  data = calloc (1, new_size);
  if (!data)
    goto out;
  randomise (data, old_size, 1);
  snprintf (path, sizeof path, "%s/%s-4.img", dir, name);
  fd = shrink ? 0 : open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd == -1 || (!shrink && ftruncate (fd, MEMBER_BYTES) == -1)) {
    fail ("%s: %s", path, strerror (errno));
    goto out;
  }
  if (!shrink)
    close (fd);
  if (raid_write (a, data, old_size, 0, true) == -1
      || ((more || to_raid6) && raid_admin_add (a, path, err, sizeof err) == -1)
      || (shrink ? start_shrink (a, k, &new_size, err, sizeof err)
                 : start_reshape (a, k, err, sizeof err))
             == -1) {
    fail ("%s: %s", name, err);
    goto out;
  }
  /* What a shrink keeps: the rest is gone with the array's end. */
  if (shrink)
    old_size = new_size;
  /* A few windows, then requests on both sides of the front. */
  while (job_done (a, &kind) < MEMBER_BYTES / 8 && kind == RAID_JOB_RESHAPE)
    raid_job_step (a, 64 * 1024);
  if (kind != RAID_JOB_RESHAPE || raid_size (a) != old_size
      || scatter_writes (a, name, data, old_size) == -1
      || reads_back (a, name, data, old_size) == -1) {
    fail ("%s: mid-reshape (job %s, size %" PRIu64 ")", name,
          raid_job_name (kind), raid_size (a));
    goto out;
  }
  if (fail_roles (a, name, fails) == -1)
    goto out;
  while (job_done (a, &kind) < MEMBER_BYTES / 2 && kind == RAID_JOB_RESHAPE)
    raid_job_step (a, 256 * 1024);
  raid_close (a);
  a = reassemble (dir, name, k->after, members, from > members ? from : members,
                  &cfg2, err, sizeof err);
  if (!a) {
    fail ("%s: assembly mid-reshape: %s", name, err);
    goto out;
  }
  job_done (a, &kind);
  if (kind != RAID_JOB_RESHAPE || raid_size (a) != old_size
      || reads_back (a, name, data, old_size) == -1) {
    fail ("%s: reassembled mid-reshape: job %s, size %" PRIu64, name,
          raid_job_name (kind), raid_size (a));
    goto out;
  }
  while (raid_job_step (a, RAID_JOB_STEP_MAX) == 1)
    ;
  if (raid_size (a) != new_size || reads_back (a, name, data, new_size) == -1) {
    fail ("%s: after the reshape: size %" PRIu64 ", want %" PRIu64, name,
          raid_size (a), new_size);
    goto out;
  }
  /* A check needs every member, and redundancy. */
  if (working == members && strncmp (keys, "level = 0", 9) != 0
      && raid_job_check (a, false, 0, err, sizeof err) == -1) {
    fail ("%s: check: %s", name, err);
    goto out;
  }
  while (raid_job_step (a, RAID_JOB_STEP_MAX) == 1)
    ;
  raid_get_status (a, st);
  if (!st->synced || st->mismatches || st->members != members
      || st->level != cfg2.level || raid_status_working (st) != working) {
    fail ("%s: after the reshape: RAID%d, synced %d, %" PRIu64 " mismatches, "
          "%u of %u working",
          name, st->level, st->synced, st->mismatches, raid_status_working (st),
          st->members);
    goto out;
  }
  /* The roles dropped are spares, in the superblocks too. */
  if (shrink) {
    const unsigned spares = from - members - (failed_below (fails, from) - failed_below (fails, members));
    raid_close (a);
    raid_config_free (&cfg2);
    a = reassemble (dir, name, k->after, members, from, &cfg2, err,
                    sizeof err);
    if (!a || reads_back (a, name, data, new_size) == -1) {
      fail ("%s: assembled after the reshape: %s", name, a ? "" : err);
      goto out;
    }
    raid_get_status (a, st);
    if (spares_in (st) != spares || raid_size (a) != new_size) {
      fail ("%s: after the shrink: %u spares, not %u; %" PRIu64 " bytes",
            name, spares_in (st), spares, raid_size (a));
      goto out;
    }
    raid_close (a);
    a = NULL;
    if (!*fails
        && lagging_spare_settles (
               dir, name, k->after, from - 1, members,
               (uint32_t)atoi (strstr (keys, "chunk = ") + 8) * 2, &cfg2)
               == -1)
      goto out;
  }
  checks++;
  printf ("ok: %s reshaped (%s %s), %" PRIu64 " to %" PRIu64 " bytes\n", name,
          k->option, k->value, old_size, new_size);
  r = 0;
out:
  free (data);
  free (st);
  raid_close (a);
  raid_config_free (&cfg);
  raid_config_free (&cfg2);
  return r;
}

static const struct reshape_case cases[] = {
  { "raid0", "level = 0\nchunk = 16K\n", "level = 0\nchunk = 16K\n", 4,
    "--raid-devices", "5", "", 0 },
  { "raid5-raid6", "level = 5\nchunk = 32K\nbitmap-chunk = 64K\n",
    "level = 6\nchunk = 32K\nlayout = left-symmetric\nbitmap-chunk = 64K\n", 3,
    "--level", "left-symmetric", "", 0 },
  { "bitmap", "level = 5\nchunk = 16K\nbitmap-chunk = 64K\n",
    "level = 5\nchunk = 16K\nbitmap-chunk = 64K\n", 3, "--raid-devices", "5",
    "", 0 },
  { "nobitmap",
    "level = 5\nchunk = 64K\nlayout = right-asymmetric\nbitmap = none\n",
    "level = 5\nchunk = 64K\nlayout = right-asymmetric\nbitmap = none\n", 3,
    "--raid-devices", "5", "", 0 },
  { "raid6", "level = 6\nchunk = 16K\nbitmap-chunk = 64K\n",
    "level = 6\nchunk = 16K\nbitmap-chunk = 64K\n", 2, "--raid-devices", "5",
    "", 0 },
  { "raid6-degraded",
    "level = 6\nchunk = 32K\nlayout = left-asymmetric\nbitmap = none\n",
    "level = 6\nchunk = 32K\nlayout = left-asymmetric\nbitmap = none\n", 2,
    "--raid-devices", "5", "1,4", 0 },
  { "chunk-up", "level = 5\nchunk = 16K\nbitmap-chunk = 64K\n",
    "level = 5\nchunk = 64K\nbitmap-chunk = 64K\n", 3, "--chunk", "64K", "", 0 },
  { "chunk-down", "level = 6\nchunk = 64K\nbitmap = none\n",
    "level = 6\nchunk = 16K\nbitmap = none\n", 2, "--chunk", "16K", "", 0 },
  { "layout", "level = 5\nchunk = 32K\nbitmap-chunk = 64K\n",
    "level = 5\nchunk = 32K\nlayout = right-asymmetric\n"
    "bitmap-chunk = 64K\n",
    3, "--layout", "right-asymmetric", "", 0 },
  { "layout-degraded", "level = 6\nchunk = 32K\nbitmap = none\n",
    "level = 6\nchunk = 32K\nlayout = left-symmetric-6\nbitmap = none\n", 2,
    "--layout", "left-symmetric-6", "0", 0 },
  { "shrink", "level = 5\nchunk = 32K\nbitmap-chunk = 64K\n",
    "level = 5\nchunk = 32K\nbitmap-chunk = 64K\n", 4, "--raid-devices", "4",
    "", 5 },
  { "shrink-raid6-degraded",
    "level = 6\nchunk = 16K\nlayout = right-asymmetric\nbitmap = none\n",
    "level = 6\nchunk = 16K\nlayout = right-asymmetric\nbitmap = none\n", 4,
    "--raid-devices", "5", "1,5", 6 },
  { "raid10", "level = 10\nlayout = n2\nchunk = 32K\nbitmap-chunk = 64K\n",
    "level = 10\nlayout = n2\nchunk = 32K\nbitmap-chunk = 64K\n", 0,
    "--raid-devices", "5", "", 0 },
  { "raid10-offset-degraded", "level = 10\nlayout = o2\nchunk = 16K\nbitmap = none\n",
    "level = 10\nlayout = o2\nchunk = 16K\nbitmap = none\n", 0,
    "--raid-devices", "5", "1", 0 },
  { "raid10-shrink", "level = 10\nlayout = n2\nchunk = 32K\nbitmap-chunk = 64K\n",
    "level = 10\nlayout = n2\nchunk = 32K\nbitmap-chunk = 64K\n", 0,
    "--raid-devices", "4", "", 5 },
};

int
main (void)
{
  char dir[] = "/tmp/nbdraid-test-reshape.XXXXXX";
  char cmd[600];
  int failed = 0;
  size_t i;

  if (!mkdtemp (dir)) {
    perror ("mkdtemp");
    return 1;
  }
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
    failed |= run_case (dir, &cases[i]);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "warning: could not remove %s\n", dir);
  if (failed || failures)
    return EXIT_FAILURE;
  printf ("test-reshape: %u arrays reshaped\n", checks);
  return EXIT_SUCCESS;
}
