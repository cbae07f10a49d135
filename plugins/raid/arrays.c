/* nbdkit-raid-plugin: the arrays one server serves, each as the NBD
 * export named by its array name.
 *
 * config=FILE may be given again and again, and dir=DIR adds every
 * *.conf file of a directory, as one md host assembles every array of
 * its mdadm.conf.  With one config nothing changes: whatever fails
 * stops nbdkit.  With several, an array that cannot be served (a bad
 * config, a missing member, a name or device another array has) is
 * reported in one line and left out, and the others serve.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "arrays.h"
#include "control.h"

static struct served *served;
static unsigned nserved;

int
arrays_add_config (const char *path)
{
  char *real = nbdkit_realpath (path);
  struct served *more;

  if (!real)
    return -1;
  more = realloc (served, (nserved + 1) * sizeof *served);
  if (!more) {
    nbdkit_error ("%s: %m", path);
    free (real);
    return -1;
  }
  served = more;
  served[nserved++] = (struct served) { .path = real };
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

int
arrays_add_dir (const char *dir)
{
  struct dirent **names;
  char path[4096];
  int n, i, r = 0;

  n = scandir (dir, &names, is_conf, alphasort);
  if (n == -1) {
    nbdkit_error ("dir=%s: %m", dir);
    return -1;
  }
  if (n == 0)
    nbdkit_error ("dir=%s: no *.conf file in it", dir);
  for (i = 0; i < n; i++) {
    snprintf (path, sizeof path, "%s/%s", dir, names[i]->d_name);
    if (r == 0)
      r = arrays_add_config (path);
    free (names[i]);
  }
  free (names);
  return n == 0 ? -1 : r;
}

/* Several arrays: their failures are each one's own. */
static bool
several (void)
{
  return nserved > 1;
}

/* The earlier served array s shares a name or control socket with, or
 * NULL. */
static const struct served *
clash (const struct served *s)
{
  char mine[256], theirs[256];
  const struct served *o;

  raid_config_socket_path (&s->cfg, mine, sizeof mine);
  for (o = served; o < s; o++) {
    if (!o->loaded)
      continue;
    raid_config_socket_path (&o->cfg, theirs, sizeof theirs);
    if (strcmp (o->cfg.name, s->cfg.name) == 0 ||
        strcmp (mine, theirs) == 0)
      return o;
  }
  return NULL;
}

int
arrays_load (void)
{
  char err[1024];
  unsigned i, loaded = 0;

  if (nserved == 0) {
    nbdkit_error ("a config file is required: nbdkit raid FILE.conf "
                  "(or dir=DIR)");
    return -1;
  }
  for (i = 0; i < nserved; i++) {
    struct served *s = &served[i];
    const struct served *o;

    if (raid_config_load (s->path, &s->cfg, err, sizeof err) == -1) {
      nbdkit_error ("%s%s", several () ? "left out: " : "", err);
      if (!several ())
        return -1;
      continue;
    }
    s->loaded = true;
    o = clash (s);
    if (o) {
      nbdkit_error ("left out: %s: array %s has the name or control socket "
                    "of array %s in %s", s->path, s->cfg.name, o->cfg.name,
                    o->path);
      raid_config_free (&s->cfg);
      s->loaded = false;
      continue;
    }
    loaded++;
  }
  if (loaded == 0) {
    nbdkit_error ("no config could be loaded");
    return -1;
  }
  return 0;
}

/* A device cfg lists (its nested arrays' too) that an array served
 * before upto serves, under any name: its path in which, that array in
 * *other.  Checked before assembly, which may already write. */
static bool
shares_device (const struct raid_config *cfg, const struct served *upto,
               char *which, size_t len, const struct served **other)
{
  const struct served *o;
  unsigned i;

  for (i = 0; i < cfg->nmembers + cfg->nspares; i++) {
    const struct raid_member_spec *m = i < cfg->nmembers ? &cfg->members[i]
      : &cfg->spares[i - cfg->nmembers];
    if (m->missing)
      continue;
    for (o = served; o < upto; o++)
      if (o->array && raid_array_holding (o->array, m->path)) {
        snprintf (which, len, "%s", m->path);
        *other = o;
        return true;
      }
  }
  for (i = 0; i < cfg->ngroups; i++)
    if (shares_device (cfg->groups[i], upto, which, len, other))
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

/* mdadm's last resort (mdadm-last-resort@.timer): an array that lacks
 * members it could start without waits for them up to wait_s seconds,
 * trying again every second (a disk still spinning up, a shelf still
 * booting), then starts degraded, and says so. */
static struct raid_array *
assemble_waiting (const struct raid_config *cfg,
                  const struct raid_options *opts, uint64_t wait_s,
                  char *err, size_t errlen)
{
  struct raid_options last = *opts;
  struct raid_array *a;
  struct timespec start, now;
  char msg[1200];

  clock_gettime (CLOCK_MONOTONIC, &start);

  for (;;) {
    a = raid_assemble (cfg, opts, err, errlen);
    if (a || opts->degraded || wait_s == 0 ||
        !startable_degraded (cfg, opts))
      return a;
    clock_gettime (CLOCK_MONOTONIC, &now);
    if ((uint64_t) (now.tv_sec - start.tv_sec) >= wait_s)
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

/* Assemble s; -1 with the reason in err. */
static int
assemble_one (struct served *s, const struct raid_options *defaults,
              uint64_t wait_s, control_stop_fn stop, char *err,
              size_t errlen)
{
  struct raid_options opts = *defaults;
  const struct served *o;
  char which[256];

  s->control = control_new (&s->cfg);
  if (!s->control) {
    snprintf (err, errlen, "%s", strerror (errno));
    return -1;
  }
  control_set_stop (s->control, stop);
  if (shares_device (&s->cfg, s, which, sizeof which, &o)) {
    snprintf (err, errlen, "%s: array %s: %s is a device of array %s (%s)",
              s->path, s->cfg.name, which, o->cfg.name, o->path);
    return -1;
  }
  opts.event = control_event;
  opts.log_opaque = s->control;
  s->array = assemble_waiting (&s->cfg, &opts, wait_s, err, errlen);
  if (!s->array)
    return -1;
  return control_listen (s->control, err, errlen);
}

int
arrays_assemble (const struct raid_options *opts, uint64_t wait_s,
                 control_stop_fn stop)
{
  char err[1024];
  unsigned i, up = 0;

  for (i = 0; i < nserved; i++) {
    struct served *s = &served[i];

    if (!s->loaded)
      continue;
    if (assemble_one (s, opts, wait_s, stop, err, sizeof err) == 0) {
      up++;
      continue;
    }
    nbdkit_error ("%s%s", several () ? "left out: " : "", err);
    if (!several ())
      return -1;
    raid_close (s->array);
    s->array = NULL;
    control_free (s->control);
    s->control = NULL;
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

  for (i = 0; i < nserved; i++) {
    struct served *s = &served[i];

    if (!s->array)
      continue;
    if (raid_start (s->array) == -1) {
      nbdkit_error ("array %s: starting the member I/O threads: %m",
                    s->cfg.name);
      return -1;
    }
    if (control_start (s->control, s->array, err, sizeof err) == -1) {
      nbdkit_error ("%s", err);
      return -1;
    }
  }
  return 0;
}

/* The one array served, or NULL when there are several. */
static struct served *
only (void)
{
  struct served *one = NULL;
  unsigned i;

  for (i = 0; i < nserved; i++)
    if (served[i].array) {
      if (one)
        return NULL;
      one = &served[i];
    }
  return one;
}

void
arrays_names (char *buf, size_t len)
{
  size_t used = 0;
  unsigned i;

  buf[0] = '\0';
  for (i = 0; i < nserved; i++)
    if (served[i].array && used < len)
      used += (size_t) snprintf (buf + used, len - used, "%s%s",
                                 used ? ", " : "",
                                 raid_name (served[i].array));
}

struct served *
arrays_find (const char *export_name)
{
  char names[1024];
  unsigned i;

  if (export_name[0] == '\0' && only ())
    return only ();
  for (i = 0; i < nserved; i++)
    if (served[i].array &&
        strcmp (raid_name (served[i].array), export_name) == 0)
      return &served[i];
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
  unsigned i, working = 0;

  if (!st) {
    snprintf (buf, len, "%s", raid_name (a));
    return;
  }
  raid_get_status (a, st);
  for (i = 0; i < st->ndevices; i++)
    working += st->dev[i].role >= 0 && st->dev[i].state == RAID_DEV_ACTIVE;
  raid_layout_name (st->level, st->layout, layout, sizeof layout);
  snprintf (buf, len, "RAID%d%s%s, %u members", st->level,
            strcmp (layout, "-") ? " " : "",
            strcmp (layout, "-") ? layout : "", st->members);
  if (st->chunk_bytes)
    snprintf (buf + strlen (buf), len - strlen (buf), ", %luK chunk",
              (unsigned long) (st->chunk_bytes / 1024));
  snprintf (buf + strlen (buf), len - strlen (buf), ", %s",
            st->failed ? "failed" : working < st->members ? "degraded"
            : "active");
  free (st);
}

int
arrays_list (struct nbdkit_exports *exports)
{
  char what[256];
  unsigned i;

  for (i = 0; i < nserved; i++) {
    if (!served[i].array)
      continue;
    describe (served[i].array, what, sizeof what);
    if (nbdkit_add_export (exports, raid_name (served[i].array), what) == -1)
      return -1;
  }
  return 0;
}

unsigned
arrays_connections (void)
{
  unsigned i, n = 0;

  for (i = 0; i < nserved; i++)
    n += __atomic_load_n (&served[i].connections, __ATOMIC_RELAXED);
  return n;
}

/* Control planes first: they drive the arrays' background work. */
void
arrays_free (void)
{
  unsigned i;

  for (i = 0; i < nserved; i++)
    control_free (served[i].control);
  for (i = 0; i < nserved; i++) {
    raid_close (served[i].array);
    if (served[i].loaded)
      raid_config_free (&served[i].cfg);
    free (served[i].path);
  }
  free (served);
  served = NULL;
  nserved = 0;
}
