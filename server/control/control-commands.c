/* nbdraid: the admin commands the control socket takes.
 *
 * A request is one line of tab-separated words: the verb, then its
 * arguments.  The answer is "OK" and the output, or "ERR <reason>", and
 * the server closes the connection, except for monitor, which stays
 * open and gets one EVENT line per event, and wait, answered only once
 * no job runs.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "checks.h"
#include "control-status.h"
#include "control.h"
#include "detail.h"

#define MIB (1024.0 * 1024.0)
/* 1 PB/s: more than any array, far below 2^64 bytes/s. */
#define MAX_SPEED_MB 1e9

/* speed-limit [MIN MAX], in MiB/s (0 for MAX: no limit). */
static void
speed_limit (struct control *c, FILE *fp, char *const *w, int n)
{
  uint64_t min, max;
  char *e1, *e2;

  if (n == 3) {
    double lo = strtod (w[1], &e1), hi = strtod (w[2], &e2);
    /* Written so NaN fails too; the bound keeps the conversion to
     * bytes defined. */
    if (*e1 || *e2 || e1 == w[1] || e2 == w[2] ||
        !(lo >= 0 && lo <= MAX_SPEED_MB) || !(hi >= 0 && hi <= MAX_SPEED_MB) ||
        (hi > 0 && lo > hi)) {
      fprintf (fp, "ERR speed-limit MIN MAX: MiB/s up to %.0f, MIN no more "
               "than MAX (MAX 0: no limit)\n", MAX_SPEED_MB);
      return;
    }
    control_set_speed (c, (uint64_t) (lo * MIB), (uint64_t) (hi * MIB));
  }
  else if (n != 1) {
    fprintf (fp, "ERR usage: speed-limit [MIN MAX]\n");
    return;
  }
  control_speed (c, &min, &max);
  fprintf (fp, "OK\nspeed-limit: min %.1f MiB/s, max ", min / MIB);
  if (max)
    fprintf (fp, "%.1f MiB/s\n", max / MIB);
  else
    fprintf (fp, "unlimited\n");
}

/* The answer of an admin verb: OK, or ERR and its reason. */
static void
answer (FILE *fp, int r, const char *err, const char *done)
{
  if (r == 0)
    fprintf (fp, "OK\n%s%s", done, *done ? "\n" : "");
  else
    fprintf (fp, "ERR %s\n", err);
}

/* A grow changed the roles (the config says the new ones): the answer
 * warns if losing one controller now fails the array, as create does
 * (--arrange's rule, on the new shape; the spares that took roles bring
 * their controller= with them). */
static void
warn_controllers (const char *file, char *done, size_t donelen)
{
  struct raid_config cfg;
  char err[1024], why[512], list[512];
  size_t used = strlen (done);

  if (raid_config_load (file, &cfg, err, sizeof err) == -1)
    return;
  if (raid_controllers_report (&cfg, list, sizeof list, why, sizeof why) == 0)
    snprintf (done + used, donelen - used, "\nwarning: %s", why);
  raid_config_free (&cfg);
}

/* reload: the server serves the configs that appeared (or were left
 * out) since it started; a failure's lines go on one ERR line. */
static void
reload (struct control *c, FILE *fp)
{
  char report[8192] = "", *nl;
  int r;

  if (!control_server (c)) {
    answer (fp, -1, "this server cannot reload", "");
    return;
  }
  r = control_server (c)->reload (report, sizeof report);
  for (nl = strchr (report, '\n'); r == -1 && nl; nl = strchr (nl, '\n'))
    *nl = ' ';
  answer (fp, r, report, report[0] ? report : "nothing new to serve");
}

/* check|repair [--budget DURATION] [--from-start]: resume where the
 * last one stopped (or from the start), for at most the budget. */
static void
check (struct control *c, struct raid_array *a, FILE *fp, char **w, int n)
{
  uint64_t budget = 0;
  bool from_start = false;
  char err[512], done[128];
  int i, r;

  for (i = 1; i < n; i++)
    if (strcmp (w[i], "--from-start") == 0)
      from_start = true;
    else if (strcmp (w[i], "--budget") == 0 && i + 1 < n) {
      if (raid_parse_duration (w[++i], &budget) == -1 || budget == 0) {
        fprintf (fp, "ERR --budget '%s' is not a duration of a second or "
                 "more (like 90s, 10m, 6h, 2d)\n", w[i]);
        return;
      }
    }
    else {
      fprintf (fp, "ERR usage: %s [--budget DURATION] [--from-start]\n",
               w[0]);
      return;
    }
  r = checks_start (control_checks (c), a, w[0][0] == 'r', from_start,
                    budget, done, sizeof done, err, sizeof err);
  answer (fp, r, err, done);
  control_kick (c);
}

/* What a verb acts on: the array "--array NAME" names, else the one
 * serving the device the verb names, else the served array; and that
 * array's part of the config. */
struct target {
  struct raid_array *a;
  const struct raid_config *cfg;
  bool named;                   /* --array given */
};

/* Find the array, and its part of the config, a request acts on; -1
 * with ERR written if --array names no array here. */
static int
find_target (struct raid_array *top, struct raid_config *cfg,
             const struct control_request *rq, struct target *t, FILE *fp)
{
  const char *name = rq->array;

  t->named = name != NULL;
  t->a = name ? raid_find_array (top, name)
    : rq->nwords >= 2 ? raid_array_holding (top, rq->word[1]) : NULL;
  if (name && !t->a) {
    fprintf (fp, "ERR no array named %s here\n", name);
    return -1;
  }
  if (!t->a)
    t->a = top;
  t->cfg = t->a == top ? cfg : raid_config_find_group (cfg, name ? name
                                                        : raid_name (t->a));
  if (!t->cfg)
    t->cfg = cfg;
  return 0;
}

/* add PATH: a spare of the array, or, in the top array of nested ones
 * (unless --array names one), a shared spare. */
static int
add (struct raid_array *top, const struct target *t, const char *path,
     char *err, size_t errlen)
{
  int r = t->a == top && !t->named && raid_children (top, NULL, 0) > 0
    ? raid_admin_add_shared (top, path, err, errlen)
    : raid_admin_add (t->a, path, err, errlen);

  return r == 0 ? raid_config_add_spare (t->cfg, path, err, errlen) : r;
}

/* Whether device d is one the keyword form of the verb acts on:
 * fail detached (in use, and gone), remove failed, remove detached
 * (faulty or a spare, and gone). */
static bool
qualifies (const struct raid_device_status *d, bool fail, bool detached)
{
  bool in_use = d->state == RAID_DEV_ACTIVE || d->state == RAID_DEV_SPARE ||
    d->state == RAID_DEV_RECOVERING || d->state == RAID_DEV_REPLACING;

  if (fail)
    return d->detached && in_use;
  if (detached)
    return d->detached && (d->state == RAID_DEV_FAULTY ||
                           (d->role < 0 && d->state == RAID_DEV_SPARE));
  return d->state == RAID_DEV_FAULTY;
}

/* mdadm's keywords: fail detached, remove failed, remove detached: the
 * verb on every device of a that qualifies, one after the other (a
 * removed device's line leaves the config too). */
static void
every_device (struct raid_array *a, const struct raid_config *cfg, FILE *fp,
              bool fail, bool detached)
{
  struct raid_status *st = malloc (sizeof *st);
  char err[1024] = "", name[4096], removed[4096], done[8192] = "";
  size_t used = 0;
  unsigned i, rounds = 0;
  int r = 0;

  if (!st) {
    fprintf (fp, "ERR out of memory\n");
    return;
  }
  /* Each one changes the devices' states and places: look again each
   * time. */
  do {
    raid_get_status (a, st);
    for (i = 0; i < st->ndevices && !qualifies (&st->dev[i], fail, detached);
         i++)
      ;
    if (i == st->ndevices || rounds++ > st->ndevices)
      break;
    snprintf (name, sizeof name, "%s", st->dev[i].path);
    if (fail)
      r = raid_admin_fail (a, name, false, err, sizeof err);
    else {
      r = raid_admin_remove (a, name, removed, sizeof removed, err,
                             sizeof err);
      if (r == 0)
        r = raid_config_drop_device (cfg, removed, err, sizeof err);
      snprintf (name, sizeof name, "%s", removed);
    }
    if (r == 0 && used < sizeof done)
      used += (size_t) snprintf (done + used, sizeof done - used, "%s%s %s",
                                 used ? "\n" : "",
                                 fail ? "failed" : "removed", name);
  } while (r == 0);
  if (r == 0 && used == 0)
    snprintf (done, sizeof done, "no %s device to %s",
              detached ? "detached" : "failed", fail ? "fail" : "remove");
  /* One ERR line, which must still tell what was done before. */
  for (i = 0; r == -1 && i < used; i++)
    if (done[i] == '\n')
      done[i] = ',';
  if (r == -1 && used)
    snprintf (err + strlen (err), sizeof err - strlen (err),
              " (done before: %.700s)", done);
  answer (fp, r, err, done);
  free (st);
}

/* One EVENT line, as broadcast sends them. */
static void
event_line (FILE *fp, enum raid_event event, const char *array,
            const char *member, const char *detail)
{
  fprintf (fp, "EVENT\t%s\t%s\t%s\t%s\n", raid_event_name (event), array,
           member, detail);
}

/* A new monitor hears how a and its nested arrays stand, as mdadm
 * --monitor reports what it finds when it starts: FailedArray or
 * DegradedArray, SparesMissing (fewer spares than the config lists),
 * RebuildStarted for a job running. */
static void
replay (FILE *fp, struct raid_array *a, const struct raid_config *cfg,
        struct raid_status *st)
{
  struct raid_array *child[RAID_MAX_MEMBERS];
  unsigned n = raid_children (a, child, RAID_MAX_MEMBERS), i, spares = 0;
  const char *target = "";
  char detail[64];

  raid_get_status (a, st);
  if (st->failed)
    event_line (fp, RAID_EVENT_FAILED_ARRAY, st->name, "", "");
  else if (raid_status_working (st) < st->members)
    event_line (fp, RAID_EVENT_DEGRADED_ARRAY, st->name, "", "");
  for (i = 0; i < st->ndevices; i++)
    spares += st->dev[i].role < 0 && st->dev[i].state == RAID_DEV_SPARE;
  /* A config with nested arrays lists a pool, not the top's spares. */
  if (cfg && cfg->ngroups == 0 && spares < cfg->nspares) {
    snprintf (detail, sizeof detail, "%u of %u spares", spares,
              cfg->nspares);
    event_line (fp, RAID_EVENT_SPARES_MISSING, st->name, "", detail);
  }
  if (st->job != RAID_JOB_NONE) {
    for (i = 0; i < st->ndevices && st->job_target >= 0; i++)
      if (st->dev[i].role == st->job_target)
        target = st->dev[i].path;
    event_line (fp, RAID_EVENT_REBUILD_STARTED, st->name, target,
                raid_job_name (st->job));
  }
  for (i = 0; i < n; i++)
    replay (fp, child[i], cfg ? raid_config_find_group (cfg->top ? cfg->top
                                                         : cfg,
                                                         raid_name (child[i]))
            : NULL, st);
}

bool
control_command (struct control *c, struct raid_array *a,
                 struct raid_config *cfg, struct control_client *cl, int fd,
                 char *line)
{
  char err[1024] = "", done[512] = "", **w;
  FILE *fp = fdopen (dup (fd), "w");
  struct control_request rq;
  struct target t;
  bool keep = false, json, force;
  int n, r;

  if (!fp)
    return false;
  r = control_parse (line, &rq, err, sizeof err);
  w = rq.word;
  n = rq.nwords;
  json = rq.json;
  force = rq.force;
  if (r == -1)
    fprintf (fp, "ERR %s\n", err);
  else if (find_target (a, cfg, &rq, &t, fp) == -1)
    ;
  else if (strcmp (w[0], "status") == 0 && json && rq.prometheus)
    fprintf (fp, "ERR status takes --json or --prometheus, not both\n");
  else if (strcmp (w[0], "status") == 0 && rq.prometheus)
    control_reply_metrics (c, t.named ? t.a : a, fp);
  else if (strcmp (w[0], "status") == 0)
    control_reply_status (c, t.named ? t.a : a, fp, json);
  else if (strcmp (w[0], "stop") == 0 && n == 1) {
    /* The answer goes first: the server may be gone before it would. */
    if (!control_server (c))
      answer (fp, -1, "this server cannot be stopped from here", "");
    else if (control_server (c)->stop (force, err, sizeof err) == -1)
      answer (fp, -1, err, "");
    else {
      snprintf (done, sizeof done, "stopping array %s", cfg->name);
      answer (fp, 0, err, done);
    }
  }
  else if (strcmp (w[0], "reload") == 0 && n == 1)
    reload (c, fp);
  else if (strcmp (w[0], "detail") == 0 && n == 1) {
    struct raid_status *st = malloc (sizeof *st);

    if (st) {
      raid_get_status (t.a, st);
      fprintf (fp, "OK\n");
      detail_text (fp, st);
    }
    else
      fprintf (fp, "ERR out of memory\n");
    free (st);
  }
  else if ((strcmp (w[0], "fail") == 0 || strcmp (w[0], "remove") == 0) &&
           n == 2 && (strcmp (w[1], "detached") == 0 ||
                      (w[0][0] == 'r' && strcmp (w[1], "failed") == 0)))
    every_device (t.a, t.cfg, fp, w[0][0] == 'f', w[1][0] == 'd');
  else if (strcmp (w[0], "fail") == 0 && n == 2) {
    r = raid_admin_fail (t.a, w[1], force, err, sizeof err);
    snprintf (done, sizeof done, "failed %s", w[1]);
    answer (fp, r, err, done);
  }
  else if (strcmp (w[0], "remove") == 0 && n == 2) {
    char removed[4096] = "";
    r = raid_admin_remove (t.a, w[1], removed, sizeof removed, err,
                           sizeof err);
    if (r == 0)
      r = raid_config_drop_device (t.cfg, removed, err, sizeof err);
    snprintf (done, sizeof done, "removed %s", removed);
    answer (fp, r, err, done);
  }
  else if (strcmp (w[0], "re-add") == 0 && n == 2) {
    r = raid_admin_readd (t.a, w[1], err, sizeof err);
    snprintf (done, sizeof done, "re-added %s", w[1]);
    /* The device's line said missing since its remove: it names it
     * again, or the next start would leave it out. */
    if (r == 0
        && raid_config_restore_device (t.cfg, w[1], err, sizeof err) == -1)
      snprintf (done, sizeof done, "re-added %s; but %s", w[1], err);
    answer (fp, r, err, done);
    control_kick (c);
  }
  else if (strcmp (w[0], "add") == 0 && n == 2) {
    r = add (a, &t, w[1], err, sizeof err);
    snprintf (done, sizeof done, "added %s as a %sspare", w[1],
              t.a == a && !t.named && raid_children (a, NULL, 0) > 0
              ? "shared " : "");
    answer (fp, r, err, done);
    control_kick (c);
  }
  else if (strcmp (w[0], "replace") == 0 && (n == 2 || n == 4)) {
    const char *with = n == 4 && strcmp (w[2], "--with") == 0 ? w[3] : NULL;
    if (n == 4 && !with) {
      snprintf (err, sizeof err, "usage: replace MEMBER [--with PATH]");
      r = -1;
    }
    else
      r = raid_admin_replace (t.a, w[1], with, err, sizeof err);
    if (r == 0 && with)
      r = raid_config_add_spare (t.cfg, with, err, sizeof err);
    snprintf (done, sizeof done, "replacing %s", w[1]);
    answer (fp, r, err, done);
    control_kick (c);
  }
  else if (strcmp (w[0], "grow") == 0 && n == 3 &&
           strcmp (w[1], "--size") == 0) {
    /* A nested array grows by itself; the array above, grown after,
     * sees its new size then. */
    r = raid_admin_grow (t.a, w[2], done, sizeof done, err, sizeof err);
    answer (fp, r, err, done);
    control_kick (c);           /* the resync of the new space */
  }
  else if (strcmp (w[0], "grow") == 0 && n == 3 &&
           strcmp (w[1], "--array-size") == 0) {
    if (t.a != a) {
      snprintf (err, sizeof err, "array %s is nested in array %s: cutting "
                "its size is not supported", raid_name (t.a), raid_name (a));
      r = -1;
    }
    else
      r = raid_admin_array_size (t.a, w[2], done, sizeof done, err,
                                 sizeof err);
    answer (fp, r, err, done);
  }
  else if (strcmp (w[0], "grow") == 0 && n == 3 &&
           strcmp (w[1], "--raid-devices") == 0) {
    char changed[4096];
    unsigned before = raid_members (t.a);

    /* A nested array only grows: the array above uses all it holds. */
    if (t.a != a && strtoul (w[2], NULL, 10) < before) {
      snprintf (err, sizeof err, "array %s is nested in array %s: fewer "
                "members is not supported (the array above uses all it "
                "holds)", raid_name (t.a), raid_name (a));
      r = -1;
    }
    else
      r = raid_admin_grow_devices (t.a, w[2], changed, sizeof changed, done,
                                   sizeof done, err, sizeof err);
    /* The superblocks carry the new count: the member lines follow
     * (a RAID5/6's dropped roles are spares: its devices still hold
     * the data the reshape moves). */
    if (r == 0) {
      struct raid_shape sh;
      raid_get_shape (t.a, &sh);
      r = raid_config_change_roles (t.cfg, changed,
                                    raid_members (t.a) > before ? RAID_ROLES_PROMOTE
                                    : sh.level == 1             ? RAID_ROLES_DROP
                                                                : RAID_ROLES_DEMOTE,
                                    err, sizeof err);
    }
    if (r == 0)
      warn_controllers (t.cfg->file, done, sizeof done);
    answer (fp, r, err, done);
    control_kick (c);           /* the recovery of the new mirrors */
  }
  else if (strcmp (w[0], "grow") == 0 && n == 5
           && ((strcmp (w[1], "--level") == 0 && strcmp (w[3], "--layout") == 0)
               || (strcmp (w[1], "--layout") == 0
                   && strcmp (w[3], "--level") == 0))) {
    bool first = strcmp (w[1], "--level") == 0;
    const char *level = first ? w[2] : w[4], *layout = first ? w[4] : w[2];
    char changed[4096];
    struct raid_shape sh;

    if (t.a != a) {
      snprintf (err, sizeof err,
                "array %s is nested in array %s: changing "
                "its level is not supported",
                raid_name (t.a), raid_name (a));
      r = -1;
    }
    else if (strcmp (level, "6") != 0 && strcasecmp (level, "raid6") != 0) {
      snprintf (err, sizeof err,
                "grow --level %s --layout: only --level 6 on a RAID5 "
                "takes a layout (mdadm --grow --level=6)",
                level);
      r = -1;
    }
    else
      r = raid_admin_grow_raid6 (t.a, layout, changed, sizeof changed, done,
                                 sizeof done, err, sizeof err);
    /* The superblocks carry the new level and layout and the Q disk's
     * role: the config follows. */
    if (r == 0) {
      raid_get_shape (t.a, &sh);
      r = raid_config_set_level (cfg, sh.level, sh.layout, sh.chunk_bytes, err,
                                 sizeof err);
    }
    if (r == 0)
      r = raid_config_change_roles (cfg, changed, RAID_ROLES_PROMOTE, err,
                                    sizeof err);
    if (r == 0)
      warn_controllers (cfg->file, done, sizeof done);
    answer (fp, r, err, done);
    control_kick (c); /* the reshape */
  }
  else if (strcmp (w[0], "grow") == 0 && n == 3 &&
           strcmp (w[1], "--level") == 0) {
    char changed[4096];
    unsigned before = raid_members (t.a);
    struct raid_shape sh;

    if (t.a != a) {
      snprintf (err, sizeof err, "array %s is nested in array %s: changing "
                "its level is not supported", raid_name (t.a),
                raid_name (a));
      r = -1;
    }
    else
      r = raid_admin_takeover (t.a, w[2], changed, sizeof changed, done,
                               sizeof done, err, sizeof err);
    /* The superblocks carry the new level: the config follows. */
    if (r == 0) {
      raid_get_shape (t.a, &sh);
      r = raid_config_set_level (cfg, sh.level, sh.layout, sh.chunk_bytes,
                                 err, sizeof err);
    }
    if (r == 0 && sh.members != before)
      r = raid_config_change_roles (cfg, changed, sh.members > before
                                    ? RAID_ROLES_PROMOTE : RAID_ROLES_DEMOTE,
                                    err, sizeof err);
    if (r == 0)
      warn_controllers (cfg->file, done, sizeof done);
    answer (fp, r, err, done);
    control_kick (c);
  }
  else if (strcmp (w[0], "grow") == 0 && n == 3
           && (strcmp (w[1], "--chunk") == 0
               || strcmp (w[1], "--layout") == 0)) {
    struct raid_shape sh;

    if (t.a != a) {
      snprintf (err, sizeof err,
                "array %s is nested in array %s: changing "
                "its shape is not supported",
                raid_name (t.a), raid_name (a));
      r = -1;
    }
    else
      r = raid_admin_grow_shape (t.a, w[1], w[2], done, sizeof done, err,
                                 sizeof err);
    /* The superblocks carry the new shape: the config follows. */
    if (r == 0) {
      raid_get_shape (t.a, &sh);
      r = raid_config_set_level (cfg, sh.level, sh.layout, sh.chunk_bytes, err,
                                 sizeof err);
    }
    answer (fp, r, err, done);
    control_kick (c); /* the reshape */
  }
  else if ((strcmp (w[0], "readonly") == 0 ||
            strcmp (w[0], "readwrite") == 0) && n == 1) {
    bool ro = w[0][4] == 'o';

    /* The array above writes into a nested one: alone, it would be
     * failed out of it. */
    if (t.a != a) {
      snprintf (err, sizeof err, "array %s is nested in array %s: make %s "
                "%s instead", raid_name (t.a), raid_name (a), raid_name (a),
                w[0]);
      r = -1;
    }
    else
      r = raid_admin_readonly (t.a, ro, err, sizeof err);
    snprintf (done, sizeof done, "array %s is %s", raid_name (t.a),
              ro ? "read-only" : "writable");
    answer (fp, r, err, done);
    control_kick (c);           /* a paused job resumes */
  }
  else if (strcmp (w[0], "check") == 0 || strcmp (w[0], "repair") == 0)
    check (c, t.a, fp, w, n);
  else if (strcmp (w[0], "idle") == 0 && n == 1) {
    r = checks_idle (control_checks (c), t.a, err, sizeof err);
    answer (fp, r, err, "");
  }
  else if (strcmp (w[0], "speed-limit") == 0)
    speed_limit (c, fp, w, n);
  else if (strcmp (w[0], "monitor") == 0 && n == 1) {
    struct raid_status *st = malloc (sizeof *st);

    fprintf (fp, "OK\n");
    if (st)
      replay (fp, a, cfg, st);
    free (st);
    fprintf (fp, "monitoring array %s\n", cfg->name);
    control_subscribe (c, cl);
    keep = true;
  }
  else if (strcmp (w[0], "wait") == 0 && n == 1) {
    control_wait (c, cl);
    keep = true;
  }
  else
    fprintf (fp, "ERR unknown command '%s' or wrong arguments (status, "
             "detail, fail, remove, add, re-add, replace, grow, check, repair, "
             "idle, speed-limit, readonly, readwrite, monitor, wait, stop, "
             "reload; "
             "--array NAME for a nested array)\n", w[0]);
  fclose (fp);
  return keep;
}
