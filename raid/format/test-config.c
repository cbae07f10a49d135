/* nbdraid: the config parser on every key, good and bad values, and
 * its error messages (file:line).  Also run under valgrind, so every
 * path that allocates is freed once. */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config-file.h"
#include "test-report.h"

static char dir[] = "/tmp/nbdraid-test-config.XXXXXX";

/* Parse text; NULL on success, else the error. */
static const char *
parse (const char *text, struct raid_config *cfg)
{
  static char err[1024];
  char path[sizeof dir + 16];
  FILE *fp;

  snprintf (path, sizeof path, "%s/t.conf", dir);
  fp = fopen (path, "w");
  fputs (text, fp);
  fclose (fp);
  if (raid_config_load (path, cfg, err, sizeof err) == 0)
    return NULL;
  return err;
}

static void
expect_error (const char *text, const char *want)
{
  struct raid_config cfg;
  const char *err = parse (text, &cfg);

  if (!err) {
    fail ("accepted: %s", text);
    raid_config_free (&cfg);
  }
  else if (!strstr (err, want))
    fail ("for %s: wanted '%s', got '%s'", text, want, err);
}

#define MEMBERS "[members]\nmember = a.img controller=c0\n" \
  "member = b.img controller=c1\nmember = c.img\nspare = s.img\n"

static void
check_full (void)
{
  struct raid_config cfg;
  const char *err = parse ("[array]\nname = media\nlevel = raid6\n"
                           "layout = ra\nchunk = 128K   # a comment\n"
                           "direct = yes\nsocket = ctl.sock\n"
                           "controllers = c0 c1\nbitmap = internal\n"
                           "bitmap-chunk = 1M\nauto-readd = true\n"
                           "speed-min = 5M\nspeed-max = 1G\n"
                           "nbd-connections = 8\nnbd-timeout = 7\n"
                           "nbd-connect-timeout = 3\n"
                           "check-interval = 1d\ncheck-budget = 2h\n"
                           "state-dir = state\nheartbeat = 250ms\n"
                           "read-ahead = 16M\n"
                           "[members]\nmember = a.img controller=c0\n"
                           "member = b.img controller=c1\n"
                           "member = nbd://host/x controller=c0\n"
                           "member = d.img\nspare = s.img controller=c1\n",
                           &cfg);
  if (err) {
    fail ("full config refused: %s", err);
    return;
  }
  if (strcmp (cfg.name, "media") || cfg.level != 6 || cfg.layout != 1 ||
      cfg.chunk_bytes != 128 * 1024 || !cfg.direct || !cfg.bitmap ||
      cfg.bitmap_chunk_bytes != 1 << 20 || !cfg.auto_readd ||
      cfg.speed_min != 5 << 20 || cfg.speed_max != 1 << 30 ||
      cfg.nbd_connections != 8 || cfg.nbd_timeout_s != 7 ||
      cfg.nbd_connect_timeout_s != 3 || cfg.nmembers != 4 ||
      cfg.heartbeat_ms != 250 || cfg.read_ahead_bytes != 16 << 20 ||
      cfg.nspares != 1 || strcmp (cfg.members[2].path, "nbd://host/x") ||
      strcmp (cfg.members[0].controller, "c0") || cfg.members[3].controller ||
      !strstr (cfg.socket, "/ctl.sock") || cfg.members[0].path[0] != '/' ||
      cfg.check_interval_s != 86400 || cfg.check_budget_s != 7200 ||
      !strstr (cfg.state_dir, "/state"))
    fail ("full config parsed wrong: name %s level %d layout %u chunk %lu "
          "direct %d bitmap %d/%lu readd %d speed %lu/%lu nbd %u/%u/%u "
          "members %u spares %u socket %s", cfg.name, cfg.level, cfg.layout,
          (unsigned long) cfg.chunk_bytes, cfg.direct, cfg.bitmap,
          (unsigned long) cfg.bitmap_chunk_bytes, cfg.auto_readd,
          (unsigned long) cfg.speed_min, (unsigned long) cfg.speed_max,
          cfg.nbd_connections, cfg.nbd_timeout_s, cfg.nbd_connect_timeout_s,
          cfg.nmembers, cfg.nspares, cfg.socket);
  raid_config_free (&cfg);
}

#define R5_MEMBERS "[members]\nmember = a.img\nmember = b.img\nmember = c.img\n"

/* consistency-policy = resync|bitmap|ppl, mdadm's words: ppl drops the
 * bitmap; md's refusals name the line: ppl on another level than
 * RAID5 or beside bitmap = internal, and a journal we do not keep. */
static void
check_consistency_policy (void)
{
  struct raid_config cfg;
  const char *err = parse (
      "[array]\nlevel = 5\nconsistency-policy = ppl\n" R5_MEMBERS, &cfg);

  if (err)
    fail ("consistency-policy ppl refused: %s", err);
  else {
    if (!cfg.ppl || cfg.bitmap)
      fail ("consistency-policy ppl: ppl %d, bitmap %d", cfg.ppl, cfg.bitmap);
    raid_config_free (&cfg);
  }
  err = parse ("[array]\nlevel = 5\nconsistency-policy = resync\n" R5_MEMBERS,
               &cfg);
  if (err)
    fail ("consistency-policy resync refused: %s", err);
  else {
    if (cfg.ppl || cfg.bitmap)
      fail ("consistency-policy resync: ppl %d, bitmap %d", cfg.ppl,
            cfg.bitmap);
    raid_config_free (&cfg);
  }
  expect_error ("[array]\nlevel = 6\nconsistency-policy = ppl\n"
                "[members]\nmember = a.img\nmember = b.img\nmember = "
                "c.img\nmember = d.img\n",
                "t.conf:3: consistency-policy ppl applies to RAID5, not to "
                "RAID6");
  expect_error ("[array]\nlevel = 5\nbitmap = internal\n"
                "consistency-policy = ppl\n" R5_MEMBERS,
                "t.conf:4: consistency-policy ppl excludes the bitmap that "
                "line 3 keeps");
  expect_error ("[array]\nlevel = 5\nconsistency-policy = ppl\n"
                "bitmap = internal\n" R5_MEMBERS,
                "t.conf:3: consistency-policy ppl excludes the bitmap that "
                "line 4 keeps");
  expect_error ("[array]\nlevel = 5\nconsistency-policy = fast\n" R5_MEMBERS,
                "t.conf:3: consistency-policy 'fast' is not "
                "resync, bitmap, ppl or journal");
}

#define R6_MEMBERS R5_MEMBERS "member = d.img\n"

/* consistency-policy = journal with journal = PATH in [members]: RAID5
 * and RAID6 only, no bitmap, the device listed once and apart from the
 * members; journal-mode write-back kept, and refused without the
 * journal policy or by another name. */
static void
check_journal (void)
{
  struct raid_config cfg;
  const char *err = parse ("[array]\nlevel = 6\nconsistency-policy = "
                           "journal\njournal-mode = write-through\n" R6_MEMBERS
                           "journal = j.img\n",
                           &cfg);

  if (err)
    fail ("consistency-policy journal refused: %s", err);
  else {
    if (!cfg.journal || cfg.bitmap || cfg.ppl || !cfg.journal_path
        || !strstr (cfg.journal_path, "/j.img") || cfg.journal_line != 10)
      fail ("journal: policy %d bitmap %d ppl %d path %s line %d", cfg.journal,
            cfg.bitmap, cfg.ppl, cfg.journal_path, cfg.journal_line);
    raid_config_free (&cfg);
  }
  expect_error ("[array]\nlevel = 5\nconsistency-policy = journal\n" R5_MEMBERS,
                "t.conf:3: consistency-policy journal needs a "
                "journal device");
  expect_error ("[array]\nlevel = 5\n" R5_MEMBERS "journal = j.img\n",
                "t.conf:7: journal = ");
  expect_error ("[array]\nlevel = 5\n" R5_MEMBERS "journal = j.img\n",
                "needs consistency-policy = journal");
  expect_error (
      "[array]\nlevel = 1\nconsistency-policy = journal\n"
      "[members]\nmember = a.img\nmember = b.img\n"
      "journal = j.img\n",
      "t.conf:3: consistency-policy journal applies to RAID4, RAID5 and "
      "RAID6, not to RAID1");
  expect_error (
      "[array]\nlevel = 10\nconsistency-policy = journal\n" R6_MEMBERS
      "journal = j.img\n",
      "t.conf:3: consistency-policy journal applies to RAID4, RAID5 and "
      "RAID6, not to RAID10");
  expect_error (
      "[array]\nlevel = 0\nconsistency-policy = journal\n" R5_MEMBERS
      "journal = j.img\n",
      "t.conf:3: consistency-policy journal applies to RAID4, RAID5 and "
      "RAID6, not to RAID0");
  expect_error ("[array]\nlevel = 5\nbitmap = internal\n"
                "consistency-policy = journal\n" R5_MEMBERS "journal = j.img\n",
                "t.conf:4: consistency-policy journal excludes the bitmap "
                "that line 3 keeps");
  expect_error ("[array]\nlevel = 5\nconsistency-policy = journal\n"
                "bitmap = internal\n" R5_MEMBERS "journal = j.img\n",
                "t.conf:3: consistency-policy journal excludes the bitmap "
                "that line 4 keeps");
  expect_error ("[array]\nlevel = 5\nconsistency-policy = journal\n" R5_MEMBERS
                "journal = b.img\n",
                "t.conf:8: ");
  expect_error ("[array]\nlevel = 5\nconsistency-policy = journal\n" R5_MEMBERS
                "journal = b.img\n",
                "b.img is listed twice: a journal cannot also be a member");
  expect_error ("[array]\nlevel = 5\nconsistency-policy = journal\n"
                "[members]\njournal = a.img\nmember = a.img\n"
                "member = b.img\nmember = c.img\n",
                "t.conf:6: ");
  expect_error ("[array]\nlevel = 5\nconsistency-policy = journal\n" R5_MEMBERS
                "journal = j.img\njournal = k.img\n",
                "t.conf:9: journal is listed twice (line 8)");
  err = parse ("[array]\nlevel = 5\nconsistency-policy = journal\n"
               "journal-mode = write-back\n" R5_MEMBERS "journal = j.img\n",
               &cfg);
  if (err)
    fail ("journal-mode write-back refused: %s", err);
  else {
    if (!cfg.journal_write_back)
      fail ("journal-mode write-back not kept");
    raid_config_free (&cfg);
  }
  expect_error ("[array]\nlevel = 5\njournal-mode = write-back\n" R5_MEMBERS,
                "t.conf:3: journal-mode needs consistency-policy = journal");
  expect_error ("[array]\nlevel = 5\nconsistency-policy = journal\n"
                "journal-mode = later\n" R5_MEMBERS "journal = j.img\n",
                "t.conf:4: journal-mode 'later' is not write-through or "
                "write-back");
  expect_error ("[array]\nlevel = 5\nconsistency-policy = journal\n"
                "[members NEST]\njournal = j.img\n",
                "journal applies to the served array only");
}

#define WM_MEMBERS "[members]\nmember = a.img\nmember = b.img write-mostly\n"

/* write-behind = N: a count up to md's 16383, 256 (mdadm's default)
 * when given no value; refused naming its line without a bitmap,
 * without a write-mostly copy, and on any level but RAID1. */
static void
check_write_behind (void)
{
  struct raid_config cfg;
  const char *err = parse ("[array]\nlevel = 1\nwrite-behind = 16383\n"
                           WM_MEMBERS, &cfg);

  if (err)
    fail ("write-behind 16383 refused: %s", err);
  else {
    if (cfg.write_behind != 16383 || cfg.write_behind_line != 3)
      fail ("write-behind parsed as %u (line %d)", cfg.write_behind,
            cfg.write_behind_line);
    raid_config_free (&cfg);
  }
  err = parse ("[array]\nlevel = 1\nwrite-behind =\n" WM_MEMBERS, &cfg);
  if (err)
    fail ("write-behind without a value refused: %s", err);
  else {
    if (cfg.write_behind != 256)
      fail ("write-behind without a value is %u, not 256", cfg.write_behind);
    raid_config_free (&cfg);
  }
  expect_error ("[array]\nlevel = 1\nwrite-behind = 16384\n" WM_MEMBERS,
                "t.conf:3: write-behind '16384' is not a number from 0 to "
                "16383");
  expect_error ("[array]\nlevel = 1\nwrite-behind = -1\n" WM_MEMBERS,
                "t.conf:3: write-behind '-1' is not a number from 0 to");
  expect_error ("[array]\nlevel = 1\nwrite-behind = many\n" WM_MEMBERS,
                "t.conf:3: write-behind 'many' is not a number");
  expect_error ("[array]\nlevel = 1\nbitmap = none\nwrite-behind = 64\n"
                WM_MEMBERS, "t.conf:4: write-behind needs the write-intent "
                "bitmap (bitmap = internal)");
  expect_error ("[array]\nwrite-behind = 64\nlevel = 1\n[members]\n"
                "member = a.img\nmember = b.img\n",
                "t.conf:2: write-behind needs a write-mostly member");
  expect_error ("[array]\nlevel = 10\nwrite-behind\t= 8\n"
                "[members]\nmember = a.img\nmember = b.img write-mostly\n"
                "member = c.img\nmember = d.img\n",
                "t.conf:3: write-behind applies to RAID1, not to RAID10");
}

/* "missing" keeps a role with no device: allowed on any number of
 * member lines, never resolved as a path; nbdraid remove writes it in
 * place of a member's path and comments out a spare's line. */
static void
check_missing (void)
{
  struct raid_config cfg;
  char path[sizeof dir + 16], got[512], err[256];
  const char *e = parse ("[array]\nlevel = 6\n[members]\nmember = a.img\n"
                         "member = missing\nmember = c.img controller=c0\n"
                         "member = missing\nspare = s.img\n", &cfg);
  FILE *fp;
  size_t n;

  if (e) {
    fail ("missing members refused: %s", e);
    return;
  }
  if (cfg.nmembers != 4 || !cfg.members[1].missing || cfg.members[0].missing
      || strcmp (cfg.members[3].path, "missing"))
    fail ("missing members parsed wrong");
  snprintf (path, sizeof path, "%s/c.img", dir);
  if (raid_config_drop_device (&cfg, path, err, sizeof err) == -1)
    fail ("drop c.img: %s", err);
  snprintf (path, sizeof path, "%s/s.img", dir);
  if (raid_config_drop_device (&cfg, path, err, sizeof err) == -1)
    fail ("drop s.img: %s", err);
  fp = fopen (cfg.file, "r");
  n = fread (got, 1, sizeof got - 1, fp);
  got[n] = '\0';
  fclose (fp);
  if (strcmp (got, "[array]\nlevel = 6\n[members]\nmember = a.img\n"
              "member = missing\nmember = missing controller=c0 # removed by "
              "nbdraid: c.img\nmember = missing\n# removed by nbdraid: "
              "spare = s.img\n"))
    fail ("config after dropping a member and a spare: %s", got);
  raid_config_free (&cfg);
  expect_error ("[array]\nlevel = 1\n[members]\nmember = a\n"
                "spare = missing\n", "t.conf:5: a spare cannot be missing");
}

/* raid_parse_duration: seconds, with s, m, h, d or w; nothing else. */
static void
check_durations (void)
{
  static const struct {
    const char *s;
    int r;
    uint64_t want;
  } cases[] = {
    { "90", 0, 90 }, { "90s", 0, 90 }, { "10m", 0, 600 }, { "6h", 0, 21600 },
    { "2d", 0, 172800 }, { "1W", 0, 604800 }, { "0", 0, 0 },
    { "", -1, 0 }, { "h", -1, 0 }, { "10x", -1, 0 }, { "10mm", -1, 0 },
    { "-5m", -1, 0 }, { "1.5h", -1, 0 }, { "99999999999999999999", -1, 0 },
  };
  size_t i;

  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint64_t got = 0;
    int r = raid_parse_duration (cases[i].s, &got);
    if (r != cases[i].r || (r == 0 && got != cases[i].want))
      fail ("raid_parse_duration (\"%s\"): %d, %" PRIu64 "; want %d, %"
            PRIu64, cases[i].s, r, got, cases[i].r, cases[i].want);
  }
}

int
main (void)
{
  char cmd[sizeof dir + 16];

  if (!mkdtemp (dir)) {
    perror ("mkdtemp");
    return 1;
  }
  check_full ();
  check_missing ();
  check_write_behind ();
  check_consistency_policy ();
  check_journal ();
  expect_error ("[array]\nlevel = 5\ncolour = red\n" MEMBERS,
                "t.conf:3: unknown key 'colour'");
  expect_error ("[array]\nlevel = 5\n[disks]\nmember = a\n",
                "t.conf:3: unknown section [disks]");
  expect_error ("level = 5\n", "t.conf:1: 'level' is outside any section");
  expect_error ("[array]\nlevel = 7\n" MEMBERS, "t.conf:2: level '7'");
  expect_error ("[array]\nlevel = 5\nchunk = 12Q\n" MEMBERS,
                "t.conf:3: chunk '12Q' is not a size");
  expect_error ("[array]\nlevel = 5\nchunk = 12K\n" MEMBERS,
                "t.conf:3: chunk 12288 must be a power of two");
  expect_error ("[array]\nlevel = 1\nchunk = 64K\n" MEMBERS,
                "t.conf:3: chunk does not apply to RAID1");
  expect_error ("[array]\nlevel = 0\nlayout = ls\n" MEMBERS,
                "t.conf:3: layout does not apply to RAID0");
  expect_error ("[array]\nlevel = 10\nlayout = x2\n" MEMBERS,
                "t.conf:3: layout 'x2' is not a RAID10 layout");
  expect_error ("[array]\nlevel = 6\n" MEMBERS,
                "t.conf:2: RAID6 left-symmetric needs at least 4 members");
  expect_error ("[array]\nlevel = 1\n[members]\nmember = a foo=1\n",
                "t.conf:4: unknown member option 'foo=1'");
  /* One NBD export, spelt two ways. */
  expect_error ("[array]\nlevel = 1\n[members]\nmember = nbd://host/x\n"
                "member = NBD://Host:10809/%78\n",
                "t.conf:5: NBD://Host:10809/%78 is listed twice");
  expect_error ("[array]\nlevel = 1\ncontrollers = c0\n" MEMBERS,
                "t.conf:6: controller 'c1' is not one of those declared");
  expect_error ("[array]\nlevel = 1\nbitmap = maybe\n" MEMBERS,
                "t.conf:3: bitmap 'maybe' is not internal or none");
  expect_error ("[array]\nlevel = 1\nbitmap-chunk = 3K\n" MEMBERS,
                "t.conf:3: bitmap-chunk '3K' is not a power of two");
  expect_error ("[array]\nlevel = 1\nnbd-timeout = 0\n" MEMBERS,
                "t.conf:3: nbd-timeout '0' is not a number from 1");
  expect_error ("[array]\nlevel = 1\nspeed-max = fast\n" MEMBERS,
                "t.conf:3: speed-max 'fast' is not a size");
  expect_error ("[array]\nlevel = 1\ndirect = sometimes\n" MEMBERS,
                "t.conf:3: direct 'sometimes' is not true or false");
  expect_error ("[array]\nlevel = 1\ncheck-interval = weekly\n" MEMBERS,
                "t.conf:3: check-interval 'weekly' is not a duration");
  expect_error ("[array]\nlevel = 1\nheartbeat = 50ms\n" MEMBERS,
                "t.conf:3: heartbeat '50ms' is not off or a duration from "
                "100ms to 60s");
  expect_error ("[array]\nlevel = 1\nheartbeat = never\n" MEMBERS,
                "t.conf:3: heartbeat 'never' is not off");
  expect_error ("[array]\nlevel = 1\nread-ahead = 2G\n" MEMBERS,
                "t.conf:3: read-ahead '2G' is not off or a size up to 1G");
  expect_error ("[array]\nlevel = 1\nread-ahead = lots\n" MEMBERS,
                "t.conf:3: read-ahead 'lots' is not off");
  expect_error ("[array]\nlevel = 1\ncheck-interval = 1500ms\n" MEMBERS,
                "t.conf:3: check-interval '1500ms' is not a duration");
  expect_error ("[array]\nlevel = 1\ncheck-budget = 10q\n" MEMBERS,
                "t.conf:3: check-budget '10q' is not a duration");
  expect_error ("[array]\nlevel = 6\nscrub-fail-after = some\n" MEMBERS,
                "t.conf:3: scrub-fail-after 'some' is not a count");
  expect_error ("[array]\nname = 0123456789012345678901234567890123\n",
                "t.conf:2: name must be 1 to 32 characters");
  expect_error ("[array]\n[members]\nmember = a\nmember = b\n",
                "[array] level is missing");
  snprintf (cmd, sizeof cmd, "rm -rf %s", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "warning: could not remove %s\n", dir);
  if (failures) {
    printf ("test-config: %u failures\n", failures);
    return 1;
  }
  check_durations ();
  printf ("test-config: every key parsed, 29 bad configs refused by "
          "file:line, durations parsed\n");
  return 0;
}
