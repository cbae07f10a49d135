/* nbdraid status --prometheus: the text exposition format, version
 * 0.0.4 (prometheus.io/docs/instrumenting/exposition_formats): a
 * family's "# HELP" and "# TYPE" lines, then its samples.  The format
 * wants all samples of a family in one group, so each family's header
 * is followed by every array's samples of it, not each array by all of
 * its families.
 *
 * Names follow Prometheus's conventions: base units (bytes, seconds)
 * in the name, counters end in _total, a state is a 0/1 gauge with a
 * sample per possible value (1 for the current one), and text (uuid,
 * level, layout) goes in the labels of an _info gauge of value 1.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "prometheus.h"

/* A label, its value escaped as the format says: backslash, double
 * quote and newline.  sep goes before it ("{" for the first). */
static void
label (FILE *fp, const char *sep, const char *name, const char *value)
{
  fprintf (fp, "%s%s=\"", sep, name);
  for (; *value; value++)
    if (*value == '\\')
      fputs ("\\\\", fp);
    else if (*value == '"')
      fputs ("\\\"", fp);
    else if (*value == '\n')
      fputs ("\\n", fp);
    else
      fputc (*value, fp);
  fputc ('"', fp);
}

static void
header (FILE *fp, const char *name, const char *type, const char *help)
{
  fprintf (fp, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A sample's name and its array label, left open for more labels. */
static void
sample_start (FILE *fp, const char *name, const struct raid_status *st)
{
  fputs (name, fp);
  label (fp, "{", "array", st->name);
}

/* A member's labels: its device, and its role ("none" outside the
 * roles: a spare, or a failed device a spare has replaced). */
static void
member_labels (FILE *fp, const struct raid_device_status *d)
{
  char role[16];

  snprintf (role, sizeof role, "%d", d->role);
  label (fp, ",", "device", d->path);
  label (fp, ",", "role", d->role >= 0 ? role : "none");
}

/* Close the labels and write the value: whole numbers without a
 * fraction, fractions (a ratio, seconds) to the nanosecond. */
static void
sample_end (FILE *fp, double v)
{
  if (v >= 0 && v < 1e18 && v == (double) (uint64_t) v)
    fprintf (fp, "} %.0f\n", v);
  else
    fprintf (fp, "} %.9f\n", v);
}

/* Devices, in the roles or not, in a state. */
static unsigned
devices_in (const struct raid_status *st, enum raid_device_state state)
{
  unsigned i, n = 0;

  for (i = 0; i < st->ndevices; i++)
    n += st->dev[i].state == state;
  return n;
}

static double
up (const struct metrics_array *m)
{
  return !m->st.failed;
}

/* As status says degraded: serving every byte, some role not active. */
static double
degraded (const struct metrics_array *m)
{
  return !m->st.failed && raid_status_working (&m->st) < m->st.members;
}

static double
failed (const struct metrics_array *m)
{
  return m->st.failed;
}

static double
in_sync (const struct metrics_array *m)
{
  return m->st.synced;
}

static double
readonly (const struct metrics_array *m)
{
  return m->st.readonly;
}

static double
members (const struct metrics_array *m)
{
  return m->st.members;
}

static double
working_members (const struct metrics_array *m)
{
  return raid_status_working (&m->st);
}

static double
failed_members (const struct metrics_array *m)
{
  return devices_in (&m->st, RAID_DEV_FAULTY);
}

static double
spares (const struct metrics_array *m)
{
  return devices_in (&m->st, RAID_DEV_SPARE);
}

static double
shared_spares (const struct metrics_array *m)
{
  return m->shared_spares;
}

static double
size_bytes (const struct metrics_array *m)
{
  return m->st.array_bytes;
}

static double
job_progress (const struct metrics_array *m)
{
  return m->st.job_total ? (double) m->st.job_done / m->st.job_total : 0;
}

static double
job_speed (const struct metrics_array *m)
{
  return m->job_speed;
}

static double
mismatches (const struct metrics_array *m)
{
  return m->st.mismatches;
}

static double
unlocated (const struct metrics_array *m)
{
  return m->st.unlocated;
}

static double
bitmap_chunks (const struct metrics_array *m)
{
  return m->st.bitmap_chunks;
}

static double
bitmap_dirty (const struct metrics_array *m)
{
  return m->st.bitmap_dirty;
}

static double
reads (const struct metrics_array *m)
{
  return m->st.requests.reads;
}

static double
read_bytes (const struct metrics_array *m)
{
  return m->st.requests.read_bytes;
}

static double
writes (const struct metrics_array *m)
{
  return m->st.requests.writes;
}

static double
write_bytes (const struct metrics_array *m)
{
  return m->st.requests.write_bytes;
}

static double
zeroes (const struct metrics_array *m)
{
  return m->st.requests.zeroes;
}

static double
zero_bytes (const struct metrics_array *m)
{
  return m->st.requests.zero_bytes;
}

static double
failed_requests (const struct metrics_array *m)
{
  return m->st.requests.failed;
}

static double
behind_limit (const struct metrics_array *m)
{
  return m->st.behind_limit;
}

static double
behind_writes (const struct metrics_array *m)
{
  return m->st.behind_writes;
}

static double
behind_slots (const struct metrics_array *m)
{
  return m->st.behind_slots;
}

static double
journal_bytes (const struct metrics_array *m)
{
  return m->st.journal_bytes;
}

static double
journal_used_bytes (const struct metrics_array *m)
{
  return m->st.journal_used_bytes;
}

static double
journal_failed (const struct metrics_array *m)
{
  return m->st.journal_state && strcmp (m->st.journal_state, "active") != 0;
}

/* The families of one sample per array. */
static const struct array_family {
  const char *name, *type, *help;
  double (*value) (const struct metrics_array *m);
} array_families[] = {
  { "nbdraid_array_up", "gauge",
    "1 while the array serves all of its data (not failed).", up },
  { "nbdraid_array_degraded", "gauge",
    "1 while the array serves without some of its roles active.", degraded },
  { "nbdraid_array_failed", "gauge",
    "1 once the array has lost more members than its level tolerates.",
    failed },
  { "nbdraid_array_in_sync", "gauge",
    "0 while a resync is due (redundancy not yet complete).", in_sync },
  { "nbdraid_array_readonly", "gauge",
    "1 while client writes are refused (nbdraid readonly, readonly=true).",
    readonly },
  { "nbdraid_array_members", "gauge", "Roles in the array.", members },
  { "nbdraid_array_working_members", "gauge", "Roles whose device is active.",
    working_members },
  { "nbdraid_array_failed_members", "gauge",
    "Devices marked faulty, until nbdraid remove takes them out.",
    failed_members },
  { "nbdraid_array_spares", "gauge", "Spares waiting outside the roles.",
    spares },
  { "nbdraid_array_shared_spares", "gauge",
    "The free shared spares of the top of nested arrays.", shared_spares },
  { "nbdraid_array_size_bytes", "gauge", "What the array serves, in bytes.",
    size_bytes },
  { "nbdraid_job_progress_ratio", "gauge",
    "How far the background job is, from 0 to 1 (0: none).", job_progress },
  { "nbdraid_job_speed_bytes_per_second", "gauge",
    "The background job's speed, bytes of each member per second "
    "(0: none or unknown).",
    job_speed },
  { "nbdraid_check_mismatched_sectors", "gauge",
    "Sectors the last (or running) check or repair found wrong.", mismatches },
  { "nbdraid_check_unlocated_sectors", "gauge",
    "Of them, sectors it could not pin on one member.", unlocated },
  { "nbdraid_bitmap_chunks", "gauge",
    "Chunks of the write-intent bitmap (0: no bitmap).", bitmap_chunks },
  { "nbdraid_bitmap_dirty_chunks", "gauge", "Bitmap chunks marked dirty.",
    bitmap_dirty },
  { "nbdraid_reads_total", "counter", "Client read requests.", reads },
  { "nbdraid_read_bytes_total", "counter", "Bytes clients read.", read_bytes },
  { "nbdraid_writes_total", "counter", "Client write requests.", writes },
  { "nbdraid_written_bytes_total", "counter", "Bytes clients wrote.",
    write_bytes },
  { "nbdraid_zeroes_total", "counter", "Client zero and trim requests.",
    zeroes },
  { "nbdraid_zeroed_bytes_total", "counter", "Bytes clients zeroed or trimmed.",
    zero_bytes },
  { "nbdraid_failed_requests_total", "counter",
    "Client reads, writes and zeroes that failed.", failed_requests },
  { "nbdraid_write_behind_limit", "gauge",
    "md's write-behind limit (0: write-behind is off).", behind_limit },
  { "nbdraid_write_behind_outstanding_writes", "gauge",
    "Client writes the write-mostly members do not have yet.", behind_writes },
  { "nbdraid_write_behind_slots", "gauge",
    "What those writes count against the limit (one per MiB or part).",
    behind_slots },
  { "nbdraid_journal_bytes", "gauge",
    "The write journal's ring, in bytes (0: no journal).", journal_bytes },
  { "nbdraid_journal_used_bytes", "gauge",
    "Bytes of the ring the journal's log holds past its tail.",
    journal_used_bytes },
  { "nbdraid_journal_failed", "gauge",
    "1 while the array runs without its write journal (failed or "
    "missing): client writes are refused.",
    journal_failed },
};

static double
corrected_reads (const struct raid_device_status *d)
{
  return d->corrected_reads;
}

static double
mismatched_sectors (const struct raid_device_status *d)
{
  return d->mismatched_sectors;
}

static double
detached (const struct raid_device_status *d)
{
  return d->detached;
}

static double
read_seconds (const struct raid_device_status *d)
{
  return d->read_ns / 1e9;
}

static double
slow (const struct raid_device_status *d)
{
  return d->slow;
}

/* The families of one sample per device. */
static const struct member_family {
  const char *name, *type, *help;
  double (*value) (const struct raid_device_status *d);
} member_families[] = {
  { "nbdraid_member_corrected_reads_total", "counter",
    "Read errors repaired from the redundancy (md's corrected reads, "
    "kept in the superblock).",
    corrected_reads },
  { "nbdraid_member_mismatched_sectors_total", "counter",
    "Sectors checks found wrong on the device since assembly.",
    mismatched_sectors },
  { "nbdraid_member_detached", "gauge",
    "1 while the device's path no longer names what was opened.", detached },
  { "nbdraid_member_read_seconds", "gauge",
    "The device's average read time lately (0: not read yet).", read_seconds },
  { "nbdraid_member_slow", "gauge",
    "1 while a mirror reads the device only when no other copy can, "
    "its reads being far slower than the fastest other copy of its data.",
    slow },
};

#define ELEMENTS(t) (sizeof (t) / sizeof (t)[0])

/* nbdraid_array_info: what is text about an array, as labels. */
static void
info (FILE *fp, const struct metrics_array *arrays, unsigned n)
{
  const struct raid_level *l;
  char layout[40];
  unsigned i;

  header (fp, "nbdraid_array_info", "gauge",
          "The array's UUID, level and layout, as labels (value 1).");
  for (i = 0; i < n; i++) {
    const struct raid_status *st = &arrays[i].st;
    l = raid_level_find (st->level);
    sample_start (fp, "nbdraid_array_info", st);
    label (fp, ",", "uuid", st->uuid);
    label (fp, ",", "level", l ? l->name : "unknown");
    label (fp, ",", "layout", raid_layout_name (st->level, st->layout,
                                                layout, sizeof layout));
    sample_end (fp, 1);
  }
}

/* nbdraid_job: one sample per kind of job, 1 for the one running. */
static void
job_kinds (FILE *fp, const struct metrics_array *arrays, unsigned n)
{
  unsigned i, k;

  header (fp, "nbdraid_job", "gauge", "The background job running: 1 for "
          "its kind, 0 for the others (idle: none).");
  for (i = 0; i < n; i++)
    for (k = 0; k < RAID_JOB_KINDS; k++) {
      sample_start (fp, "nbdraid_job", &arrays[i].st);
      label (fp, ",", "kind", raid_job_name (k));
      sample_end (fp, arrays[i].st.job == k);
    }
}

/* nbdraid_request_duration_seconds: a summary without quantiles, the
 * time spent in client requests and how many there were. */
static void
durations (FILE *fp, const struct metrics_array *arrays, unsigned n)
{
  unsigned i;

  header (fp, "nbdraid_request_duration_seconds", "summary",
          "Time clients' reads, writes and zeroes took, from entry to the "
          "engine to return.");
  for (i = 0; i < n; i++) {
    const struct raid_requests *rq = &arrays[i].st.requests;
    sample_start (fp, "nbdraid_request_duration_seconds_sum", &arrays[i].st);
    sample_end (fp, rq->busy_ns / 1e9);
    sample_start (fp, "nbdraid_request_duration_seconds_count",
                  &arrays[i].st);
    sample_end (fp, (double) (rq->reads + rq->writes + rq->zeroes));
  }
}

/* nbdraid_member_state: one sample per state, 1 for the device's. */
static void
member_states (FILE *fp, const struct metrics_array *arrays, unsigned n)
{
  unsigned i, j, k;

  header (fp, "nbdraid_member_state", "gauge", "The device's state as "
          "status shows it: 1 for it, 0 for the others.");
  for (i = 0; i < n; i++)
    for (j = 0; j < arrays[i].st.ndevices; j++)
      for (k = 0; k < RAID_DEV_STATES; k++) {
        const struct raid_device_status *d = &arrays[i].st.dev[j];
        sample_start (fp, "nbdraid_member_state", &arrays[i].st);
        member_labels (fp, d);
        label (fp, ",", "state", raid_device_state_name (k));
        sample_end (fp, d->state == k);
      }
}

void
prometheus_write (FILE *fp, const struct metrics_array *arrays, unsigned n)
{
  size_t f;
  unsigned i, j;

  info (fp, arrays, n);
  for (f = 0; f < ELEMENTS (array_families); f++) {
    const struct array_family *af = &array_families[f];
    header (fp, af->name, af->type, af->help);
    for (i = 0; i < n; i++) {
      sample_start (fp, af->name, &arrays[i].st);
      sample_end (fp, af->value (&arrays[i]));
    }
  }
  job_kinds (fp, arrays, n);
  durations (fp, arrays, n);
  member_states (fp, arrays, n);
  for (f = 0; f < ELEMENTS (member_families); f++) {
    const struct member_family *mf = &member_families[f];
    header (fp, mf->name, mf->type, mf->help);
    for (i = 0; i < n; i++)
      for (j = 0; j < arrays[i].st.ndevices; j++) {
        sample_start (fp, mf->name, &arrays[i].st);
        member_labels (fp, &arrays[i].st.dev[j]);
        sample_end (fp, mf->value (&arrays[i].st.dev[j]));
      }
  }
}
