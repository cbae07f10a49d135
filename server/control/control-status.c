/* nbdraid: the answer to status: an array's status and its nested
 * arrays', as text after /proc/mdstat, as JSON (--json), or as
 * Prometheus metrics (--prometheus).
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "control-status.h"
#include "json.h"
#include "prometheus.h"

/* The words that describe the array as a whole. */
static void
array_state (const struct raid_status *st, char *buf, size_t len)
{
  snprintf (buf, len, "%s%s%s%s%s",
            st->failed                               ? "failed"
            : raid_status_working (st) < st->members ? "degraded"
                                                     : "active",
            st->readonly ? ", read-only" : "", st->synced ? "" : ", resync due",
            st->job != RAID_JOB_NONE ? ", " : "",
            st->job != RAID_JOB_NONE ? raid_job_name (st->job) : "");
}

/* mdstat's progress line: [====>....]  recovery = 23.4% (...) ... */
static void
print_progress (FILE *fp, const struct raid_status *st, uint64_t speed)
{
  double frac = st->job_total ? (double)st->job_done / st->job_total : 0;
  int bar = (int)(frac * 20), i;

  fprintf (fp, "      [");
  for (i = 0; i < 20; i++)
    fputc (i < bar ? '=' : i == bar ? '>' : '.', fp);
  fprintf (fp, "]  %s = %.1f%% (%" PRIu64 "/%" PRIu64 " KiB)",
           raid_job_name (st->job), frac * 100, st->job_done / 1024,
           st->job_total / 1024);
  if (speed)
    fprintf (fp, " finish=%.1fmin speed=%" PRIu64 "K/sec",
             (double)(st->job_total - st->job_done) / speed / 60, speed / 1024);
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
    fprintf (fp, ", %s",
             raid_layout_name (st->level, st->layout, layout, sizeof layout));
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
      fprintf (fp, "  %.1f%%",
               st->member_bytes ? 100.0 * d->recovered_bytes / st->member_bytes
                                : 0);
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
    fprintf (fp, "      consistency policy: journal (%s), %s %s",
             st->journal_mode,
             st->journal_path[0] ? st->journal_path : "(journal)",
             st->journal_state);
    if (st->journal_why[0])
      fprintf (fp, " (%s)", st->journal_why);
    if (st->journal_bytes)
      fprintf (fp,
               ", %" PRIu64 "K of %" PRIu64 "K logged, tail at sector %" PRIu64,
               st->journal_used_bytes / 1024, st->journal_bytes / 1024,
               st->journal_tail_sectors);
    if (st->journal_cache_limit)
      fprintf (fp, ", %" PRIu64 "K of %" PRIu64 "K cached",
               st->journal_cached_bytes / 1024,
               st->journal_cache_limit / 1024);
    fputc ('\n', fp);
  }
  if (st->bitmap_chunk_bytes)
    fprintf (fp,
             "      bitmap: %" PRIu64 "/%" PRIu64 " chunks dirty, %" PRIu64
             "K chunk\n",
             st->bitmap_dirty, st->bitmap_chunks,
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
  json_string (fp,
               raid_layout_name (st->level, st->layout, layout, sizeof layout));
  fprintf (fp,
           ", \"chunk_bytes\": %" PRIu64 ", \"array_bytes\": %" PRIu64
           ", \"member_bytes\": %" PRIu64 ", \"members\": %u"
           ", \"working\": %u, \"state\": ",
           st->chunk_bytes, st->array_bytes, st->member_bytes, st->members,
           raid_status_working (st));
  json_string (fp, state);
  fprintf (fp,
           ", \"failed\": %s, \"synced\": %s, \"clean\": %s"
           ", \"readonly\": %s, \"events\": %" PRIu64,
           st->failed ? "true" : "false", st->synced ? "true" : "false",
           st->clean ? "true" : "false", st->readonly ? "true" : "false",
           st->events);
  fprintf (fp, ", \"devices\": [");
  for (i = 0; i < st->ndevices; i++) {
    const struct raid_device_status *d = &st->dev[i];
    fprintf (fp,
             "%s\n  {\"role\": %d, \"state\": \"%s\", \"path\": ", i ? "," : "",
             d->role, raid_device_state_name (d->state));
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
  fprintf (fp,
           "],\n \"job\": {\"kind\": \"%s\", \"target\": %d"
           ", \"done_bytes\": %" PRIu64 ", \"total_bytes\": %" PRIu64
           ", \"percent\": %.1f, \"speed_bytes_per_sec\": %" PRIu64 "}",
           raid_job_name (st->job), st->job_target, st->job_done, st->job_total,
           st->job_total ? 100.0 * st->job_done / st->job_total : 0.0, speed);
  fprintf (fp,
           ", \"mismatches\": %" PRIu64 ", \"unlocated\": %" PRIu64
           ", \"last_work_bytes\": %" PRIu64 ", \"bitmap\": "
           "{\"chunk_bytes\": %" PRIu64 ", \"chunks\": %" PRIu64
           ", \"dirty\": %" PRIu64 "}",
           st->mismatches, st->unlocated, st->last_work_bytes,
           st->bitmap_chunk_bytes, st->bitmap_chunks, st->bitmap_dirty);
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
    fprintf (fp, ", \"state\": \"%s\", \"mode\": \"%s\", \"why\": ",
             st->journal_state, st->journal_mode);
    json_string (fp, st->journal_why);
    fprintf (fp,
             ", \"bytes\": %" PRIu64 ", \"used_bytes\": %" PRIu64
             ", \"tail_sectors\": %" PRIu64 ", \"cached_bytes\": %" PRIu64
             ", \"cache_limit\": %" PRIu64 "}",
             st->journal_bytes, st->journal_used_bytes,
             st->journal_tail_sectors, st->journal_cached_bytes,
             st->journal_cache_limit);
  }
  fprintf (fp,
           ", \"write_behind\": {\"limit\": %u, \"outstanding\": %u"
           ", \"slots\": %u}",
           st->behind_limit, st->behind_writes, st->behind_slots);
  fprintf (fp,
           ", \"speed_limit\": {\"min_bytes_per_sec\": %" PRIu64
           ", \"max_bytes_per_sec\": %" PRIu64 "}",
           min, max);
  fprintf (fp,
           ", \"requests\": {\"reads\": %" PRIu64 ", \"read_bytes\": %" PRIu64
           ", \"writes\": %" PRIu64 ", \"write_bytes\": %" PRIu64
           ", \"zeroes\": %" PRIu64 ", \"zero_bytes\": %" PRIu64
           ", \"failed\": %" PRIu64 ", \"busy_ns\": %" PRIu64
           ", \"read_ahead_hits\": %" PRIu64
           ", \"read_ahead_bytes\": %" PRIu64 "}",
           st->requests.reads, st->requests.read_bytes, st->requests.writes,
           st->requests.write_bytes, st->requests.zeroes,
           st->requests.zero_bytes, st->requests.failed, st->requests.busy_ns,
           st->requests.read_ahead_hits, st->requests.read_ahead_bytes);
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
      fprintf (fp,
               "      check paused at %.1f%% (nbdraid check resumes "
               "it)\n",
               st->member_bytes ? 100.0 * paused / st->member_bytes : 0.0);
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
void
control_reply_status (struct control *c, struct raid_array *a, FILE *fp,
                      bool json)
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
collect (struct control *c, struct raid_array *a, struct metrics_array **arrays,
         unsigned *n)
{
  struct raid_array *child[RAID_MAX_MEMBERS];
  unsigned nchild = raid_children (a, child, RAID_MAX_MEMBERS), i;
  struct metrics_array *grown = realloc (*arrays, (*n + 1) * sizeof *grown), *m;

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
void
control_reply_metrics (struct control *c, struct raid_array *a, FILE *fp)
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
