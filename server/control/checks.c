/* nbdraid: checks that outlast a restart (checks.h).
 *
 * mdadm's mdcheck runs md's check for a while each night and keeps
 * where it stopped in /var/lib/mdcheck, so a large array is covered
 * over several nights.  The same here: an array's check position is
 * saved every few seconds and when a check stops (nbdraid idle, its
 * budget spent, the server killed), in a small file named for the
 * array's UUID (raid_config_state_path); the next check resumes there.
 * With check-interval in the config, a run starts by itself that long
 * after the last one started, for at most check-budget.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checks.h"

/* Seconds between saves of a running check's position. */
#define SAVE_EVERY_S 5

/* What the file keeps. */
struct check_state {
  uint64_t position;            /* bytes of each member done; 0: none */
  uint64_t last_run;            /* when the last run began (epoch s) */
  bool repair;                  /* the position is a repair's */
};

/* One array's checks. */
struct array_checks {
  struct raid_array *a;
  char path[PATH_MAX];
  struct check_state st;
  bool ours;                    /* a check started here is running */
  uint64_t deadline;            /* monotonic s its budget ends; 0 none */
  uint64_t saved_at;            /* monotonic s of the last save */
};

struct checks {
  uint64_t interval_s, budget_s;
  unsigned n;
  struct array_checks arr[];
};

/* Monotonic seconds, for budgets and saves. */
static uint64_t
now_s (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec;
}

/* Read path's state: zeros when there is none (or it is unreadable). */
static void
load (const char *path, struct check_state *st)
{
  FILE *fp = fopen (path, "re");
  char kind[8] = "";

  memset (st, 0, sizeof *st);
  if (!fp)
    return;
  if (fscanf (fp, "position %" SCNu64 "\nlast-run %" SCNu64 "\nkind %7s",
              &st->position, &st->last_run, kind) != 3)
    memset (st, 0, sizeof *st);
  st->repair = strcmp (kind, "repair") == 0;
  fclose (fp);
}

/* Make dir and the directories above it, as mkdir -p. */
static void
make_dirs (char *dir)
{
  char *slash = strrchr (dir, '/');

  if (mkdir (dir, 0755) == 0 || errno != ENOENT || !slash || slash == dir)
    return;
  *slash = '\0';
  make_dirs (dir);
  *slash = '/';
  mkdir (dir, 0755);
}

/* Write e's state atomically (a new file renamed over the old); with
 * nothing to keep, remove the file.  Failures are the loop's to live
 * with: the check goes on, a restart starts it again. */
static void
save (struct array_checks *e, uint64_t interval_s)
{
  char tmp[PATH_MAX + 8], dir[PATH_MAX];
  FILE *fp;

  e->saved_at = now_s ();
  if (e->st.position == 0 && interval_s == 0) {
    unlink (e->path);
    return;
  }
  snprintf (dir, sizeof dir, "%s", e->path);
  make_dirs (dirname (dir));
  snprintf (tmp, sizeof tmp, "%s.new", e->path);
  fp = fopen (tmp, "we");
  if (!fp)
    return;
  fprintf (fp, "position %" PRIu64 "\nlast-run %" PRIu64 "\nkind %s\n",
           e->st.position, e->st.last_run, e->st.repair ? "repair" : "check");
  if (fclose (fp) == 0)
    rename (tmp, e->path);
  else
    unlink (tmp);
}

/* Count top and the arrays nested in it; put them in out (if not
 * NULL). */
static unsigned
gather (struct raid_array *a, struct array_checks *out)
{
  struct raid_array *child[RAID_MAX_MEMBERS];
  unsigned n = 1, i, nc = raid_children (a, child, RAID_MAX_MEMBERS);

  if (out)
    out[0].a = a;
  for (i = 0; i < nc; i++)
    n += gather (child[i], out ? out + n : NULL);
  return n;
}

struct checks *
checks_new (struct raid_array *top, const struct raid_config *cfg)
{
  unsigned n = gather (top, NULL), i;
  struct checks *k = calloc (1, sizeof *k + n * sizeof k->arr[0]);
  struct raid_status *st = malloc (sizeof *st);

  if (!k || !st) {
    free (k);
    free (st);
    return NULL;
  }
  k->interval_s = cfg->check_interval_s;
  k->budget_s = cfg->check_budget_s;
  k->n = gather (top, k->arr);
  for (i = 0; i < k->n; i++) {
    raid_get_status (k->arr[i].a, st);
    raid_config_state_path (cfg, st->uuid, k->arr[i].path,
                            sizeof k->arr[i].path);
    load (k->arr[i].path, &k->arr[i].st);
  }
  free (st);
  return k;
}

void
checks_free (struct checks *k)
{
  free (k);
}

/* a's entry (a is top or nested in it). */
static struct array_checks *
find (struct checks *k, struct raid_array *a)
{
  unsigned i;

  for (i = 0; i < k->n; i++)
    if (k->arr[i].a == a)
      return &k->arr[i];
  return NULL;
}

/* Is a check or repair running on e's array, and how far is it? */
static bool
running (struct array_checks *e, uint64_t *done, uint64_t *total)
{
  enum raid_job_kind kind;

  raid_job_progress (e->a, &kind, done, total);
  return kind == RAID_JOB_CHECK || kind == RAID_JOB_REPAIR;
}

/* A check started here that no longer runs ran to its end (stops made
 * here clear `ours` first): nothing is left to resume.  Noted before
 * anything reads the position, so a check that has just ended is never
 * taken for one that stopped short. */
static void
settle (struct checks *k, struct array_checks *e)
{
  uint64_t done, total;

  if (!e->ours || running (e, &done, &total))
    return;
  e->ours = false;
  e->st.position = 0;
  save (e, k->interval_s);
}

int
checks_start (struct checks *k, struct raid_array *a, bool repair,
              bool from_start, uint64_t budget_s, char *msg, size_t msglen,
              char *err, size_t errlen)
{
  struct array_checks *e = find (k, a);
  uint64_t from = 0, done, total;
  const char *verb = repair ? "repair" : "check";

  /* A check resumes a check, a repair a repair: a repair must not skip
   * what only a check went over. */
  if (e) {
    settle (k, e);
    if (!from_start && e->st.repair == repair)
      from = e->st.position;
  }
  if (raid_job_check (a, repair, from, err, errlen) == -1)
    return -1;
  if (!e) {
    snprintf (msg, msglen, "%s started", verb);
    return 0;
  }
  e->ours = true;
  e->st.repair = repair;
  e->deadline = budget_s ? now_s () + budget_s : 0;
  e->st.last_run = (uint64_t) time (NULL);
  running (e, &done, &total);
  e->st.position = done;
  save (e, k->interval_s);
  if (done)
    snprintf (msg, msglen, "%s resumed at %.1f%%", verb,
              total ? 100.0 * done / total : 0.0);
  else
    snprintf (msg, msglen, "%s started", verb);
  if (budget_s)
    snprintf (msg + strlen (msg), msglen - strlen (msg),
              "; it stops after %" PRIu64 " s", budget_s);
  return 0;
}

/* Stop e's running check, its position saved. */
static int
stop (struct checks *k, struct array_checks *e, char *err, size_t errlen)
{
  uint64_t done, total;

  if (running (e, &done, &total)) {
    e->st.position = done;
    save (e, k->interval_s);
  }
  e->ours = false;
  return raid_job_idle (e->a, err, errlen);
}

int
checks_idle (struct checks *k, struct raid_array *a, char *err,
             size_t errlen)
{
  struct array_checks *e = find (k, a);

  if (!e)
    return raid_job_idle (a, err, errlen);
  settle (k, e);
  return stop (k, e, err, errlen);
}

uint64_t
checks_paused (struct checks *k, struct raid_array *a)
{
  struct array_checks *e = find (k, a);
  uint64_t done, total;

  if (!e)
    return 0;
  settle (k, e);
  return running (e, &done, &total) ? 0 : e->st.position;
}

/* One array's second: see checks_tick. */
static void
tick_one (struct checks *k, struct array_checks *e)
{
  char msg[128], err[256];
  uint64_t done, total, now = now_s ();

  if (running (e, &done, &total)) {
    if (!e->ours)
      return;
    if (e->deadline && now >= e->deadline)
      stop (k, e, err, sizeof err);
    else if (now - e->saved_at >= SAVE_EVERY_S) {
      e->st.position = done;
      save (e, k->interval_s);
    }
    return;
  }
  settle (k, e);
  if (k->interval_s &&
      (uint64_t) time (NULL) >= e->st.last_run + k->interval_s)
    checks_start (k, e->a, false, false, k->budget_s, msg, sizeof msg, err,
                  sizeof err);
}

void
checks_tick (struct checks *k)
{
  unsigned i;

  for (i = 0; i < k->n; i++)
    tick_one (k, &k->arr[i]);
}
