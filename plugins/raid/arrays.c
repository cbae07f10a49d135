/* nbdkit-raid-plugin: the arrays one server serves, each as the NBD
 * export named by its array name.
 *
 * config=FILE may be given again and again, and dir=DIR adds every
 * *.conf file of a directory, as one md host assembles every array of
 * its mdadm.conf.  With one config nothing changes: whatever fails
 * stops nbdkit.  With several, an array that cannot be served (a bad
 * config, a missing member, a name or device another array has) is
 * reported in one line and left out, and the others serve.  nbdraid
 * reload serves what appeared in the directories since, and what was
 * left out, without touching the arrays that serve.
 *
 * Connections look arrays up while a reload adds them: the list is of
 * pointers that never move, its length and each array's readiness
 * published with atomics once what they cover is in place.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "arrays.h"
#include "control.h"
#include "notice.h"

#define MAX_SERVED 256
#define MAX_DIRS 16

static struct served *served[MAX_SERVED];
static unsigned nserved;                /* published with atomics */
static char *dirs[MAX_DIRS];
static unsigned ndirs;
/* What arrays_assemble was given, for reload. */
static struct raid_options options;
static const struct control_server *server;
/* One reload at a time (each array's control thread may ask). */
static pthread_mutex_t reload_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned
count (void)
{
  return __atomic_load_n (&nserved, __ATOMIC_ACQUIRE);
}

/* Serving: assembled, started, and so visible to connections. */
static bool
ready (const struct served *s)
{
  return __atomic_load_n (&s->ready, __ATOMIC_ACQUIRE);
}

/* The entry for real (a realpath), or NULL. */
static struct served *
known (const char *real)
{
  unsigned i;

  for (i = 0; i < count (); i++)
    if (strcmp (served[i]->path, real) == 0)
      return served[i];
  return NULL;
}

/* Add the config file path once: 0, or -1 with the reason in err. */
static int
add (const char *path, char *err, size_t errlen)
{
  char *real = realpath (path, NULL);
  struct served *s;

  if (!real) {
    snprintf (err, errlen, "%s: %s", path, strerror (errno));
    return -1;
  }
  if (known (real)) {
    free (real);
    return 0;
  }
  s = calloc (1, sizeof *s);
  if (!s || count () == MAX_SERVED) {
    snprintf (err, errlen, "%s: %s", path, s ? "more than 256 arrays"
              : strerror (errno));
    free (s);
    free (real);
    return -1;
  }
  s->path = real;
  served[count ()] = s;
  __atomic_add_fetch (&nserved, 1, __ATOMIC_RELEASE);
  return 0;
}

int
arrays_add_config (const char *path)
{
  char err[1024];

  if (add (path, err, sizeof err) == -1) {
    nbdkit_error ("%s", err);
    return -1;
  }
  return 0;
}

/* scandir filter: names that end in .conf, not hidden. */
static int
is_conf (const struct dirent *d)
{
  size_t n = strlen (d->d_name);

  return d->d_name[0] != '.' && n > 5 &&
    strcmp (d->d_name + n - 5, ".conf") == 0;
}

/* Add dir's *.conf files not added yet, in the order of their names:
 * how many it has (with the reason one could not be added in err, the
 * others added all the same), or -1 if dir cannot be read. */
static int
scan_dir (const char *dir, char *err, size_t errlen)
{
  struct dirent **names;
  char path[4096], why[1024];
  int n, i;

  err[0] = '\0';
  n = scandir (dir, &names, is_conf, alphasort);
  if (n == -1) {
    snprintf (err, errlen, "dir=%s: %s", dir, strerror (errno));
    return -1;
  }
  /* A file that went (or a dangling link) is its own failure only. */
  for (i = 0; i < n; i++) {
    snprintf (path, sizeof path, "%s/%s", dir, names[i]->d_name);
    if (add (path, why, sizeof why) == -1)
      snprintf (err, errlen, "%s", why);
    free (names[i]);
  }
  free (names);
  return n;
}

int
arrays_add_dir (const char *dir)
{
  char err[1024];
  int n;

  if (ndirs == MAX_DIRS) {
    nbdkit_error ("dir=%s: more than %d dir= keys", dir, MAX_DIRS);
    return -1;
  }
  n = scan_dir (dir, err, sizeof err);
  if (n <= 0) {
    if (n == 0)
      nbdkit_error ("dir=%s: no *.conf file in it", dir);
    else
      nbdkit_error ("%s", err);
    return -1;
  }
  if (err[0])
    nbdkit_error ("left out: %s", err);
  dirs[ndirs] = strdup (dir);
  if (!dirs[ndirs]) {
    nbdkit_error ("dir=%s: %m", dir);
    return -1;
  }
  ndirs++;
  return 0;
}

/* Several arrays (or a directory that may grow): each array's failure
 * is its own. */
static bool
several (void)
{
  return count () > 1 || ndirs > 0;
}

/* (Re)read s's config; -1 with the reason in err. */
static int
load (struct served *s, char *err, size_t errlen)
{
  if (s->loaded)
    raid_config_free (&s->cfg);
  s->loaded = raid_config_load (s->path, &s->cfg, err, errlen) == 0;
  return s->loaded ? 0 : -1;
}

int
arrays_load (void)
{
  char err[1024];
  unsigned i, loaded = 0;

  if (count () == 0) {
    nbdkit_error ("a config file is required: nbdkit raid FILE.conf "
                  "(or dir=DIR)");
    return -1;
  }
  for (i = 0; i < count (); i++) {
    if (load (served[i], err, sizeof err) == 0) {
      loaded++;
      continue;
    }
    nbdkit_error ("%s%s", several () ? "left out: " : "", err);
    if (!several ())
      return -1;
  }
  if (loaded == 0) {
    nbdkit_error ("no config could be loaded");
    return -1;
  }
  return 0;
}

/* The array serving already that s would clash with: the same name or
 * control socket.  NULL if none. */
static const struct served *
clash (const struct served *s)
{
  char mine[256], theirs[256];
  unsigned i;

  raid_config_socket_path (&s->cfg, mine, sizeof mine);
  for (i = 0; i < count (); i++) {
    const struct served *o = served[i];
    if (o == s || !o->array)
      continue;
    raid_config_socket_path (&o->cfg, theirs, sizeof theirs);
    if (strcmp (o->cfg.name, s->cfg.name) == 0 || strcmp (mine, theirs) == 0)
      return o;
  }
  return NULL;
}

/* Whether two member specs are one device: the same URI text, or
 * paths to one file or block device, whatever their names. */
static bool
same_device (const char *a, const char *b)
{
  struct stat sa, sb;

  if (raid_spec_is_uri (a) || raid_spec_is_uri (b))
    return strcmp (a, b) == 0;
  if (stat (a, &sa) == -1 || stat (b, &sb) == -1)
    return strcmp (a, b) == 0;
  if (S_ISBLK (sa.st_mode) && S_ISBLK (sb.st_mode))
    return sa.st_rdev == sb.st_rdev;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The device spec cfg (or an array nested in it) lists as path. */
static const char *
lists (const struct raid_config *cfg, const char *path)
{
  const char *found = NULL;
  unsigned i;

  for (i = 0; i < cfg->nmembers + cfg->nspares && !found; i++) {
    const struct raid_member_spec *m = i < cfg->nmembers ? &cfg->members[i]
      : &cfg->spares[i - cfg->nmembers];
    if (!m->missing && !raid_spec_array (m->path) &&
        same_device (m->path, path))
      found = m->path;
  }
  for (i = 0; i < cfg->ngroups && !found; i++)
    found = lists (cfg->groups[i], path);
  return found;
}

/* A device cfg lists (its nested arrays' too) that the config of an
 * array assembled already lists, under any name: its path in which,
 * that array in *other.  Configs, not the arrays' devices: those
 * belong to their control threads, and a reload runs on another.
 * Checked before assembly, which may already write. */
static bool
shares_device (const struct raid_config *cfg, const struct served *self,
               char *which, size_t len, const struct served **other)
{
  unsigned i, j;

  for (i = 0; i < cfg->nmembers + cfg->nspares; i++) {
    const struct raid_member_spec *m = i < cfg->nmembers ? &cfg->members[i]
      : &cfg->spares[i - cfg->nmembers];
    if (m->missing || raid_spec_array (m->path))
      continue;
    for (j = 0; j < count (); j++) {
      const struct served *o = served[j];
      if (o != self && o->array && lists (&o->cfg, m->path)) {
        snprintf (which, len, "%s", m->path);
        *other = o;
        return true;
      }
    }
  }
  for (i = 0; i < cfg->ngroups; i++)
    if (shares_device (cfg->groups[i], self, which, len, other))
      return true;
  return false;
}

/* Whether cfg's array would start degraded: assembled read-only (so
 * that nothing is written), then let go. */
static bool
startable_degraded (const struct raid_config *cfg,
                    const struct raid_options *opts)
{
  struct raid_options trial = *opts;
  struct raid_array *a;
  char why[1024];

  trial.readonly = trial.degraded = true;
  trial.log = NULL;
  trial.event = NULL;
  a = raid_assemble (cfg, &trial, why, sizeof why);
  raid_close (a);
  return a != NULL;
}

/* When the server began assembling: arrays short of members all wait
 * until wait_s after it, not each wait_s more. */
static struct timespec assembly_began;

/* mdadm's last resort (mdadm-last-resort@.timer): an array that lacks
 * members it could start without waits for them up to wait_s seconds
 * after the server began, trying again every second (a disk still
 * spinning up, a shelf still booting), then starts degraded, and says
 * so. */
static struct raid_array *
assemble_waiting (const struct raid_config *cfg,
                  const struct raid_options *opts, uint64_t wait_s,
                  char *err, size_t errlen)
{
  struct raid_options last = *opts;
  struct raid_array *a;
  struct timespec now;
  char msg[1200];

  for (;;) {
    a = raid_assemble (cfg, opts, err, errlen);
    if (a || opts->degraded || wait_s == 0 ||
        !startable_degraded (cfg, opts))
      return a;
    clock_gettime (CLOCK_MONOTONIC, &now);
    if ((uint64_t) (now.tv_sec - assembly_began.tv_sec) >= wait_s)
      break;
    sleep (1);
  }
  last.degraded = true;
  snprintf (msg, sizeof msg, "array %s: started degraded after waiting "
            "%" PRIu64 " s: %s", cfg->name, wait_s, err);
  a = raid_assemble (cfg, &last, err, errlen);
  if (a && opts->log)
    opts->log (opts->log_opaque, RAID_LOG_WARNING, msg);
  return a;
}

/* Report an array that does not serve (several: the others do). */
static void
left_out (const char *why)
{
  char msg[1200];

  snprintf (msg, sizeof msg, "%s%s", several () ? "left out: " : "", why);
  notice_error (msg);
}

/* Assemble s and open its control socket; -1 with the reason in err,
 * s as it was. */
static int
assemble_one (struct served *s, uint64_t wait_s, char *err, size_t errlen)
{
  struct raid_options opts = options;
  const struct served *o = NULL;
  char which[256];

  /* Moved devices first (scan =): the checks look at the paths. */
  if (raid_config_scan (&s->cfg, options.log, NULL, err, errlen) == -1)
    return -1;
  if ((o = clash (s)) != NULL)
    snprintf (err, errlen, "%s: array %s has the name or control socket "
              "of array %s in %s", s->path, s->cfg.name, o->cfg.name,
              o->path);
  else if (shares_device (&s->cfg, s, which, sizeof which, &o))
    snprintf (err, errlen, "%s: array %s: %s is a device of array %s (%s)",
              s->path, s->cfg.name, which, o->cfg.name, o->path);
  else if ((s->control = control_new (&s->cfg)) == NULL)
    snprintf (err, errlen, "%s: %s", s->path, strerror (errno));
  if (o || !s->control)
    return -1;
  control_set_server (s->control, server);
  opts.event = control_event;
  opts.log_opaque = s->control;
  s->array = assemble_waiting (&s->cfg, &opts, wait_s, err, errlen);
  if (s->array && control_listen (s->control, err, errlen) == 0)
    return 0;
  raid_close (s->array);
  s->array = NULL;
  control_free (s->control);
  s->control = NULL;
  return -1;
}

/* After nbdkit's fork (or at once, for a reload): the member I/O
 * threads and the control loop; then connections may find it. */
static int
start_one (struct served *s, char *err, size_t errlen)
{
  if (raid_start (s->array) == -1) {
    snprintf (err, errlen, "array %s: starting the member I/O threads: "
              "%s", s->cfg.name, strerror (errno));
    return -1;
  }
  if (control_start (s->control, s->array, err, errlen) == -1)
    return -1;
  __atomic_store_n (&s->ready, true, __ATOMIC_RELEASE);
  return 0;
}

int
arrays_assemble (const struct raid_options *opts, uint64_t wait_s,
                 const struct control_server *srv)
{
  char err[1024];
  unsigned i, up = 0;

  options = *opts;
  server = srv;
  clock_gettime (CLOCK_MONOTONIC, &assembly_began);
  for (i = 0; i < count (); i++) {
    struct served *s = served[i];

    if (!s->loaded)
      continue;
    if (assemble_one (s, wait_s, err, sizeof err) == 0) {
      up++;
      continue;
    }
    left_out (err);
    if (!several ())
      return -1;
  }
  if (up == 0) {
    nbdkit_error ("no array could be assembled");
    return -1;
  }
  return 0;
}

int
arrays_start (void)
{
  char err[1024];
  unsigned i;

  for (i = 0; i < count (); i++)
    if (served[i]->array && start_one (served[i], err, sizeof err) == -1) {
      nbdkit_error ("%s", err);
      return -1;
    }
  return 0;
}

/* Append a line to report (len bytes, *used of them used). */
static void
say (char *report, size_t len, size_t *used, const char *line)
{
  if (*used < len)
    *used += (size_t) snprintf (report + *used, len - *used, "%s%s",
                                *used ? "\n" : "", line);
  nbdkit_debug ("reload: %s", line);
}

int
arrays_reload (char *report, size_t len)
{
  char err[1024], line[1200];
  size_t used = 0;
  unsigned i;
  int r = 0;

  report[0] = '\0';
  pthread_mutex_lock (&reload_lock);
  for (i = 0; i < ndirs; i++)
    if (scan_dir (dirs[i], err, sizeof err) == -1 || err[0]) {
      snprintf (line, sizeof line, "left out: %s", err);
      say (report, len, &used, line);
      r = -1;
    }
  for (i = 0; i < count (); i++) {
    struct served *s = served[i];

    /* Serving already, or a config since removed: nothing to do. */
    if (s->array || access (s->path, F_OK) == -1)
      continue;
    if (load (s, err, sizeof err) == 0 &&
        assemble_one (s, 0, err, sizeof err) == 0 &&
        start_one (s, err, sizeof err) == 0) {
      snprintf (line, sizeof line, "serving array %s from %s",
                raid_name (s->array), s->path);
      say (report, len, &used, line);
      continue;
    }
    if (s->array && !ready (s)) {       /* it did not start: let go */
      raid_close (s->array);
      s->array = NULL;
      control_free (s->control);
      s->control = NULL;
    }
    left_out (err);
    snprintf (line, sizeof line, "left out: %s", err);
    say (report, len, &used, line);
    r = -1;
  }
  pthread_mutex_unlock (&reload_lock);
  return r;
}

/* The one array served, or NULL when there are several. */
static struct served *
only (void)
{
  struct served *one = NULL;
  unsigned i;

  for (i = 0; i < count (); i++)
    if (ready (served[i])) {
      if (one)
        return NULL;
      one = served[i];
    }
  return one;
}

void
arrays_names (char *buf, size_t len)
{
  size_t used = 0;
  unsigned i;

  buf[0] = '\0';
  for (i = 0; i < count (); i++)
    if (ready (served[i]) && used < len)
      used += (size_t) snprintf (buf + used, len - used, "%s%s",
                                 used ? ", " : "",
                                 raid_name (served[i]->array));
}

struct served *
arrays_find (const char *export_name)
{
  struct served *one = only ();
  char names[1024];
  unsigned i;

  if (export_name[0] == '\0' && one)
    return one;
  for (i = 0; i < count (); i++)
    if (ready (served[i]) &&
        strcmp (raid_name (served[i]->array), export_name) == 0)
      return served[i];
  arrays_names (names, sizeof names);
  if (export_name[0] == '\0')
    nbdkit_error ("this server serves several arrays (%s): name one as "
                  "the export", names);
  else
    nbdkit_error ("no array named '%s' here (exports: %s)", export_name,
                  names);
  return NULL;
}

const char *
arrays_default (void)
{
  struct served *one = only ();

  /* "" again, not NULL: .open then says why it is refused. */
  return one ? raid_name (one->array) : "";
}

/* What an export is, for nbdinfo --list: "RAID5 left-symmetric, 4
 * members, 64K chunk, degraded". */
static void
describe (struct raid_array *a, char *buf, size_t len)
{
  struct raid_status *st = malloc (sizeof *st);
  char layout[40];
  if (!st) {
    snprintf (buf, len, "%s", raid_name (a));
    return;
  }
  raid_get_status (a, st);
  raid_layout_name (st->level, st->layout, layout, sizeof layout);
  snprintf (buf, len, "RAID%d%s%s, %u members", st->level,
            strcmp (layout, "-") ? " " : "",
            strcmp (layout, "-") ? layout : "", st->members);
  if (st->chunk_bytes)
    snprintf (buf + strlen (buf), len - strlen (buf), ", %luK chunk",
              (unsigned long) (st->chunk_bytes / 1024));
  snprintf (buf + strlen (buf), len - strlen (buf), ", %s",
            st->failed ? "failed"
            : raid_status_working (st) < st->members ? "degraded"
            : "active");
  free (st);
}

int
arrays_list (struct nbdkit_exports *exports)
{
  char what[256];
  unsigned i;

  for (i = 0; i < count (); i++) {
    if (!ready (served[i]))
      continue;
    describe (served[i]->array, what, sizeof what);
    if (nbdkit_add_export (exports, raid_name (served[i]->array), what) ==
        -1)
      return -1;
  }
  return 0;
}

unsigned
arrays_count (void)
{
  return count ();
}

struct served *
arrays_at (unsigned i)
{
  return served[i];
}

unsigned
arrays_connections (void)
{
  unsigned i, n = 0;

  for (i = 0; i < count (); i++)
    n += __atomic_load_n (&served[i]->connections, __ATOMIC_RELAXED);
  return n;
}

/* Members are hurried first (raid_stopping); control loops stop next:
 * they drive the arrays' background work; but they are freed last,
 * for the events of the arrays' stops. */
void
arrays_free (void)
{
  unsigned i;

  for (i = 0; i < count (); i++)
    raid_stopping (served[i]->array);
  for (i = 0; i < count (); i++)
    control_halt (served[i]->control);
  for (i = 0; i < count (); i++)
    raid_close (served[i]->array);
  for (i = 0; i < count (); i++) {
    control_free (served[i]->control);
    if (served[i]->loaded)
      raid_config_free (&served[i]->cfg);
    free (served[i]->path);
    free (served[i]->incoming);
    free (served[i]);
  }
  for (i = 0; i < ndirs; i++)
    free (dirs[i]);
  nserved = ndirs = 0;
}
