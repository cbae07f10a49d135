/* nbdraid: the admin commands the control socket takes.
 *
 * A request is one line of tab-separated words: the verb, then its
 * arguments.  The answer is "OK" and the output, or "ERR <reason>", and
 * the server closes the connection, except for monitor, which stays
 * open and gets one EVENT line per event, and wait, answered only once
 * no job runs.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks.h"
#include "control.h"
#include "detail.h"
#include "json.h"
#include "prometheus.h"

#define MIB (1024.0 * 1024.0)
/* 1 PB/s: more than any array, far below 2^64 bytes/s. */
#define MAX_SPEED_MB 1e9

/* The words that describe the array as a whole. */
static void
array_state (const struct raid_status *st, char *buf, size_t len)
{
  snprintf (buf, len, "%s%s%s%s%s", st->failed ? "failed"
            : raid_status_working (st) < st->members ? "degraded" : "active",
            st->readonly ? ", read-only" : "",
            st->synced ? "" : ", resync due",
            st->job != RAID_JOB_NONE ? ", " : "",
            st->job != RAID_JOB_NONE ? raid_job_name (st->job) : "");
}

/* mdstat's progress line: [====>....]  recovery = 23.4% (...) ... */
static void
print_progress (FILE *fp, const struct raid_status *st, uint64_t speed)
{
  double frac = st->job_total ? (double) st->job_done / st->job_total : 0;
  int bar = (int) (frac * 20), i;

  fprintf (fp, "      [");
  for (i = 0; i < 20; i++)
    fputc (i < bar ? '=' : i == bar ? '>' : '.', fp);
  fprintf (fp, "]  %s = %.1f%% (%" PRIu64 "/%" PRIu64 " KiB)",
           raid_job_name (st->job), frac * 100, st->job_done / 1024,
           st->job_total / 1024);
  if (speed)
    fprintf (fp, " finish=%.1fmin speed=%" PRIu64 "K/sec",
             (double) (st->job_total - st->job_done) / speed / 60,
             speed / 1024);
  fputc ('\n', fp);
}

/* One array's status as text, after /proc/mdstat: the array line,
 * progress, a line per device, the bitmap and the last check. */
static void
status_text (FILE *fp, const struct raid_status *st, uint64_t speed)
{
  char layout[40], state[64];
  unsigned i;

  array_state (st, state, sizeof state);
  fprintf (fp, "%s : %s raid%d [%u/%u] [", st->name, state, st->level,
           st->members, raid_status_working (st));
  for (i = 0; i < st->members; i++)
    fputc (st->dev[i].state == RAID_DEV_ACTIVE ? 'U' : '_', fp);
  fprintf (fp, "]\n      %" PRIu64 " KiB", st->array_bytes / 1024);
  if (st->chunk_bytes)
    fprintf (fp, ", chunk %" PRIu64 "K", st->chunk_bytes / 1024);
  if (raid_level_find (st->level)->layouts)
    fprintf (fp, ", %s", raid_layout_name (st->level, st->layout, layout,
                                           sizeof layout));
  fprintf (fp, ", uuid %s\n", st->uuid);
  if (st->job != RAID_JOB_NONE)
    print_progress (fp, st, speed);
  for (i = 0; i < st->ndevices; i++) {
    const struct raid_device_status *d = &st->dev[i];
    if (d->role >= 0)
      fprintf (fp, "  %4d  ", d->role);
    else
      fprintf (fp, "     -  ");
    fprintf (fp, "%-10s  %s", raid_device_state_name (d->state), d->path);
    if (d->controller[0])
      fprintf (fp, " (%s)", d->controller);
    if (d->state == RAID_DEV_RECOVERING || d->state == RAID_DEV_REPLACING)
      fprintf (fp, "  %.1f%%", st->member_bytes ? 100.0 *
               d->recovered_bytes / st->member_bytes : 0);
    if (d->corrected_reads)
      fprintf (fp, "  %u corrected reads", d->corrected_reads);
    if (d->mismatched_sectors)
      fprintf (fp, "  %" PRIu64 " mismatched sectors", d->mismatched_sectors);
    if (d->why[0] && d->state != RAID_DEV_ACTIVE)
      fprintf (fp, "  (%s)", d->why);
    if (d->devflags & RAID_DEVFLAG_WRITE_MOSTLY)
      fprintf (fp, "  (write-mostly)");
    if (d->devflags & RAID_DEVFLAG_FAILFAST)
      fprintf (fp, "  (failfast)");
    if (d->detached)
      fprintf (fp, "  (detached)");
    if (d->slow)
      fprintf (fp, "  (slow)");
    if (d->read_ns)
      fprintf (fp, "  reads %.3f ms", d->read_ns / 1e6);
    fputc ('\n', fp);
  }
  if (strcmp (st->policy, "ppl") == 0)
    fprintf (fp, "      consistency policy: ppl (partial parity log)\n");
  if (st->journal_state) {
    fprintf (fp, "      consistency policy: journal (write-through), %s %s",
             st->journal_path[0] ? st->journal_path : "(journal)",
             st->journal_state);
    if (st->journal_why[0])
      fprintf (fp, " (%s)", st->journal_why);
    if (st->journal_bytes)
      fprintf (fp,
               ", %" PRIu64 "K of %" PRIu64 "K logged, tail at sector %" PRIu64,
               st->journal_used_bytes / 1024, st->journal_bytes / 1024,
               st->journal_tail_sectors);
    fputc ('\n', fp);
  }
  if (st->bitmap_chunk_bytes)
    fprintf (fp, "      bitmap: %" PRIu64 "/%" PRIu64 " chunks dirty, %"
             PRIu64 "K chunk\n", st->bitmap_dirty, st->bitmap_chunks,
             st->bitmap_chunk_bytes / 1024);
  if (st->behind_limit)
    fprintf (fp,
             "      write-behind: %u writes outstanding, %u/%u of the "
             "limit\n",
             st->behind_writes, st->behind_slots, st->behind_limit);
  fprintf (fp, "      last check: %" PRIu64 " mismatched sectors",
           st->mismatches);
  if (st->unlocated)
    fprintf (fp, ", %" PRIu64 " on no one member", st->unlocated);
  fputc ('\n', fp);
}

/* One array's status as a JSON object, left open: status_tree adds its
 * nested arrays and shared spares, then closes it. */
static void
status_json (FILE *fp, const struct raid_status *st, uint64_t speed,
             uint64_t min, uint64_t max)
{
  char layout[40], state[64];
  unsigned i;

  array_state (st, state, sizeof state);
  fprintf (fp, "{\"name\": ");
  json_string (fp, st->name);
  fprintf (fp, ", \"uuid\": \"%s\", \"level\": %d, \"layout\": ", st->uuid,
           st->level);
  json_string (fp, raid_layout_name (st->level, st->layout, layout,
                                     sizeof layout));
  fprintf (fp, ", \"chunk_bytes\": %" PRIu64 ", \"array_bytes\": %" PRIu64
           ", \"member_bytes\": %" PRIu64 ", \"members\": %u"
           ", \"working\": %u, \"state\": ", st->chunk_bytes,
           st->array_bytes, st->member_bytes, st->members,
           raid_status_working (st));
  json_string (fp, state);
  fprintf (fp, ", \"failed\": %s, \"synced\": %s, \"clean\": %s"
           ", \"readonly\": %s, \"events\": %" PRIu64,
           st->failed ? "true" : "false", st->synced ? "true" : "false",
           st->clean ? "true" : "false", st->readonly ? "true" : "false",
           st->events);
  fprintf (fp, ", \"devices\": [");
  for (i = 0; i < st->ndevices; i++) {
    const struct raid_device_status *d = &st->dev[i];
    fprintf (fp, "%s\n  {\"role\": %d, \"state\": \"%s\", \"path\": ",
             i ? "," : "", d->role, raid_device_state_name (d->state));
    json_string (fp, d->path);
    fprintf (fp, ", \"controller\": ");
    json_string (fp, d->controller);
    fprintf (fp, ", \"why\": ");
    json_string (fp, d->state == RAID_DEV_ACTIVE ? "" : d->why);
    fprintf (fp,
             ", \"recovered_bytes\": %" PRIu64 ", \"corrected_reads\": "
             "%u, \"mismatched_sectors\": %" PRIu64 ", \"events\": %" PRIu64
             ", \"detached\": %s, \"write_mostly\": %s"
             ", \"failfast\": %s, \"read_ns\": %" PRIu64 ", \"slow\": %s}",
             d->recovered_bytes, d->corrected_reads, d->mismatched_sectors,
             d->events, d->detached ? "true" : "false",
             d->devflags & RAID_DEVFLAG_WRITE_MOSTLY ? "true" : "false",
             d->devflags & RAID_DEVFLAG_FAILFAST ? "true" : "false", d->read_ns,
             d->slow ? "true" : "false");
  }
  fprintf (fp, "],\n \"job\": {\"kind\": \"%s\", \"target\": %d"
           ", \"done_bytes\": %" PRIu64 ", \"total_bytes\": %" PRIu64
           ", \"percent\": %.1f, \"speed_bytes_per_sec\": %" PRIu64 "}",
           raid_job_name (st->job), st->job_target, st->job_done,
           st->job_total, st->job_total ? 100.0 * st->job_done /
           st->job_total : 0.0, speed);
  fprintf (fp, ", \"mismatches\": %" PRIu64 ", \"unlocated\": %" PRIu64
           ", \"last_work_bytes\": %" PRIu64 ", \"bitmap\": "
           "{\"chunk_bytes\": %" PRIu64 ", \"chunks\": %" PRIu64
           ", \"dirty\": %" PRIu64 "}", st->mismatches, st->unlocated,
           st->last_work_bytes, st->bitmap_chunk_bytes, st->bitmap_chunks,
           st->bitmap_dirty);
  fprintf (fp, ", \"reshape_from\": ");
  if (st->reshape_from.active) {
    fprintf (fp, "{\"members\": %u, \"layout\": ", st->reshape_from.members);
    json_string (fp, raid_layout_name (st->level, st->reshape_from.layout,
                                       layout, sizeof layout));
    fprintf (fp, ", \"chunk_bytes\": %" PRIu64 "}",
             st->reshape_from.chunk_bytes);
  }
  else
    fprintf (fp, "null");
  fprintf (fp, ", \"consistency_policy\": \"%s\"", st->policy);
  if (st->journal_state) {
    fprintf (fp, ", \"journal\": {\"path\": ");
    json_string (fp, st->journal_path);
    fprintf (fp, ", \"state\": \"%s\", \"why\": ", st->journal_state);
    json_string (fp, st->journal_why);
    fprintf (fp,
             ", \"bytes\": %" PRIu64 ", \"used_bytes\": %" PRIu64
             ", \"tail_sectors\": %" PRIu64 "}",
             st->journal_bytes, st->journal_used_bytes,
             st->journal_tail_sectors);
  }
  fprintf (fp,
           ", \"write_behind\": {\"limit\": %u, \"outstanding\": %u"
           ", \"slots\": %u}",
           st->behind_limit, st->behind_writes, st->behind_slots);
  fprintf (fp, ", \"speed_limit\": {\"min_bytes_per_sec\": %" PRIu64
           ", \"max_bytes_per_sec\": %" PRIu64 "}", min, max);
  fprintf (fp, ", \"requests\": {\"reads\": %" PRIu64 ", \"read_bytes\": %"
           PRIu64 ", \"writes\": %" PRIu64 ", \"write_bytes\": %" PRIu64
           ", \"zeroes\": %" PRIu64 ", \"zero_bytes\": %" PRIu64
           ", \"failed\": %" PRIu64 ", \"busy_ns\": %" PRIu64 "}",
           st->requests.reads, st->requests.read_bytes, st->requests.writes,
           st->requests.write_bytes, st->requests.zeroes,
           st->requests.zero_bytes, st->requests.failed,
           st->requests.busy_ns);
}

/* An array's status, then its nested arrays' ("arrays" in JSON), then
 * the top array's free shared spares. */
static void
status_tree (struct control *c, struct raid_array *a, FILE *fp, bool json,
             struct raid_status *st)
{
  struct raid_array *child[RAID_MAX_MEMBERS];
  const char *shared[RAID_MAX_MEMBERS];
  unsigned n = raid_children (a, child, RAID_MAX_MEMBERS);
  unsigned ns = raid_shared_spares (a, shared, RAID_MAX_MEMBERS), i;
  uint64_t min, max, paused = checks_paused (control_checks (c), a);

  raid_get_status (a, st);
  control_speed (c, &min, &max);
  if (json) {
    status_json (fp, st, control_job_speed (c), min, max);
    fprintf (fp, ", \"check_paused_bytes\": %" PRIu64, paused);
  }
  else {
    status_text (fp, st, control_job_speed (c));
    if (paused)
      fprintf (fp, "      check paused at %.1f%% (nbdraid check resumes "
               "it)\n", st->member_bytes ? 100.0 * paused / st->member_bytes
               : 0.0);
  }
  if (json && n)
    fprintf (fp, ",\n \"arrays\": [");
  for (i = 0; i < n; i++) {
    if (json && i)
      fprintf (fp, ",\n");
    status_tree (c, child[i], fp, json, st);
  }
  if (json && n)
    fprintf (fp, "]");
  if (json && ns)
    fprintf (fp, ",\n \"shared_spares\": [");
  else if (ns)
    fprintf (fp, "shared spares:");
  for (i = 0; i < ns; i++) {
    if (json) {
      fprintf (fp, "%s", i ? ", " : "");
      json_string (fp, shared[i]);
    }
    else
      fprintf (fp, " %s", shared[i]);
  }
  if (ns)
    fprintf (fp, json ? "]" : "\n");
  if (json)
    fprintf (fp, "}");
}

/* Answer status: OK, then the array's status and its nested arrays'. */
static void
reply_status (struct control *c, struct raid_array *a, FILE *fp, bool json)
{
  struct raid_status *st = malloc (sizeof *st);

  if (!st) {
    fprintf (fp, "ERR out of memory\n");
    return;
  }
  fprintf (fp, "OK\n");
  status_tree (c, a, fp, json, st);
  if (json)
    fprintf (fp, "\n");
  free (st);
}

/* Append a's part of the metrics, then its nested arrays', to
 * (*arrays)[0..*n).  0, or -1 out of memory. */
static int
collect (struct control *c, struct raid_array *a,
         struct metrics_array **arrays, unsigned *n)
{
  struct raid_array *child[RAID_MAX_MEMBERS];
  unsigned nchild = raid_children (a, child, RAID_MAX_MEMBERS), i;
  struct metrics_array *grown = realloc (*arrays, (*n + 1) * sizeof *grown),
    *m;

  if (!grown)
    return -1;
  *arrays = grown;
  m = &grown[(*n)++];
  raid_get_status (a, &m->st);
  /* The control samples the speed of the top array's job; each array
   * gets it, as in status --json. */
  m->job_speed = control_job_speed (c);
  m->shared_spares = raid_shared_spares (a, NULL, 0);
  for (i = 0; i < nchild; i++)
    if (collect (c, child[i], arrays, n) == -1)
      return -1;
  return 0;
}

/* Answer status --prometheus: OK, then the metrics of the array and
 * its nested arrays. */
static void
reply_metrics (struct control *c, struct raid_array *a, FILE *fp)
{
  struct metrics_array *arrays = NULL;
  unsigned n = 0;

  if (collect (c, a, &arrays, &n) == -1)
    fprintf (fp, "ERR out of memory\n");
  else {
    fprintf (fp, "OK\n");
    prometheus_write (fp, arrays, n);
  }
  free (arrays);
}

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
    reply_metrics (c, t.named ? t.a : a, fp);
  else if (strcmp (w[0], "status") == 0)
    reply_status (c, t.named ? t.a : a, fp, json);
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
    /* The array above sizes its members when it opens them. */
    if (t.a != a) {
      snprintf (err, sizeof err, "array %s is nested in array %s: growing "
                "it is not supported", raid_name (t.a), raid_name (a));
      r = -1;
    }
    else
      r = raid_admin_grow (t.a, w[2], done, sizeof done, err, sizeof err);
    answer (fp, r, err, done);
    control_kick (c);           /* the resync of the new space */
  }
  else if (strcmp (w[0], "grow") == 0 && n == 3 &&
           strcmp (w[1], "--raid-devices") == 0) {
    char changed[4096];
    unsigned before = raid_members (t.a);

    if (t.a != a) {
      snprintf (err, sizeof err, "array %s is nested in array %s: changing "
                "its members is not supported", raid_name (t.a),
                raid_name (a));
      r = -1;
    }
    else
      r = raid_admin_grow_devices (t.a, w[2], changed, sizeof changed, done,
                                   sizeof done, err, sizeof err);
    /* The superblocks carry the new count: the member lines follow. */
    if (r == 0)
      r = raid_config_change_roles (t.cfg, changed,
                                    raid_members (t.a) > before
                                        ? RAID_ROLES_PROMOTE
                                        : RAID_ROLES_DROP,
                                    err, sizeof err);
    answer (fp, r, err, done);
    control_kick (c);           /* the recovery of the new mirrors */
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
