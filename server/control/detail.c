/* nbdraid detail: an array as mdadm --detail shows an md device. */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "detail.h"

/* mdadm's time format: "Sat Dec  5 21:18:02 2026". */
static const char *
when (uint64_t t, char *buf, size_t len)
{
  time_t secs = (time_t) t;
  struct tm tm;

  strftime (buf, len, "%a %b %e %H:%M:%S %Y", localtime_r (&secs, &tm));
  return buf;
}

/* Bytes as mdadm writes sizes: KiB, then GiB and GB. */
static void
size_line (FILE *fp, const char *label, uint64_t bytes)
{
  fprintf (fp, "%18s : %" PRIu64 " (%.2f GiB %.2f GB)\n", label,
           bytes / 1024, bytes / 1073741824.0, bytes / 1e9);
}

/* md's state words: clean or active, and degraded, recovering, ... */
static void
state_words (const struct raid_status *st, unsigned active, char *buf,
             size_t len)
{
  snprintf (buf, len, "%s%s%s%s%s%s", st->clean ? "clean" : "active",
            st->readonly ? ", read-only" : "", st->failed ? ", FAILED" : "",
            active < st->members ? ", degraded" : "",
            st->job == RAID_JOB_RECOVERY || st->job == RAID_JOB_REPLACE
                ? ", recovering"
            : st->job == RAID_JOB_RESYNC  ? ", resyncing"
            : st->job == RAID_JOB_CHECK   ? ", checking"
            : st->job == RAID_JOB_REPAIR  ? ", repairing"
            : st->job == RAID_JOB_RESHAPE ? ", reshaping"
                                          : "",
            st->synced ? "" : ", resync due");
}

/* What each device does, in mdadm's words. */
static const char *
device_words (const struct raid_device_status *d)
{
  switch (d->state) {
  case RAID_DEV_ACTIVE:
    return "active sync";
  case RAID_DEV_RECOVERING:
    return "spare rebuilding";
  case RAID_DEV_REPLACING:
    return "replacement rebuilding";
  case RAID_DEV_FAULTY:
    return "faulty";
  case RAID_DEV_SPARE:
    return "spare";
  default:
    return "removed";
  }
}

/* mdadm --detail's lines of a reshape under way: what it changes. */
static void
reshape_lines (FILE *fp, const struct raid_status *st)
{
  char layout[40];

  if (st->members != st->reshape_from.members)
    fprintf (fp, "%18s : %d, (%u->%u)\n", "Delta Devices",
             (int)st->members - (int)st->reshape_from.members,
             st->reshape_from.members, st->members);
  if (st->layout != st->reshape_from.layout)
    fprintf (fp, "%18s : %s\n", "New Layout",
             raid_layout_name (st->level, st->layout, layout, sizeof layout));
  if (st->chunk_bytes != st->reshape_from.chunk_bytes)
    fprintf (fp, "%18s : %" PRIu64 "K\n", "New Chunksize",
             st->chunk_bytes / 1024);
  fprintf (fp, "\n");
}

void
detail_text (FILE *fp, const struct raid_status *st)
{
  unsigned i, active = 0, working = 0, failed = 0, spares = 0;
  char buf[64], layout[40];
  const struct raid_level *l = raid_level_find (st->level);
  const struct raid_reshape_from *rf = &st->reshape_from;

  for (i = 0; i < st->ndevices; i++) {
    const struct raid_device_status *d = &st->dev[i];
    active += d->role >= 0 && d->state == RAID_DEV_ACTIVE;
    working += d->state == RAID_DEV_ACTIVE ||
      d->state == RAID_DEV_RECOVERING || d->state == RAID_DEV_REPLACING ||
      d->state == RAID_DEV_SPARE;
    failed += d->state == RAID_DEV_FAULTY;
    spares += d->state == RAID_DEV_SPARE || d->state == RAID_DEV_RECOVERING ||
      d->state == RAID_DEV_REPLACING;
  }
  fprintf (fp, "%s:\n", st->name);
  fprintf (fp, "%18s : 1.2\n", "Version");
  fprintf (fp, "%18s : %s\n", "Creation Time", when (st->ctime, buf,
                                                     sizeof buf));
  fprintf (fp, "%18s : raid%d\n", "Raid Level", st->level);
  size_line (fp, "Array Size", st->array_bytes);
  size_line (fp, "Used Dev Size", st->member_bytes);
  fprintf (fp, "%18s : %u\n", "Raid Devices", st->members);
  fprintf (fp, "%18s : %u\n", "Total Devices", st->ndevices);
  fprintf (fp, "%18s : Superblock is persistent\n\n", "Persistence");
  if (st->bitmap_chunk_bytes)
    fprintf (fp, "%18s : Internal\n\n", "Intent Bitmap");
  fprintf (fp, "%18s : %s\n", "Update Time", when (st->utime, buf,
                                                   sizeof buf));
  state_words (st, active, buf, sizeof buf);
  fprintf (fp, "%18s : %s\n", "State", buf);
  fprintf (fp, "%18s : %u\n%18s : %u\n%18s : %u\n%18s : %u\n\n",
           "Active Devices", active, "Working Devices", working,
           "Failed Devices", failed, "Spare Devices", spares);
  /* As mdadm: while a reshape runs, the shape it changes from, and
   * what changes below its progress. */
  if (l && l->layouts)
    fprintf (fp, "%18s : %s\n", "Layout",
             raid_layout_name (st->level, rf->active ? rf->layout : st->layout,
                               layout, sizeof layout));
  if (st->chunk_bytes)
    fprintf (fp, "%18s : %" PRIu64 "K\n", "Chunk Size",
             (rf->active ? rf->chunk_bytes : st->chunk_bytes) / 1024);
  fprintf (fp, "\n%18s : %s\n\n", "Consistency Policy", st->policy);
  if (st->job != RAID_JOB_NONE && st->job_total)
    fprintf (fp, "%18s : %" PRIu64 "%% complete\n%s",
             st->job == RAID_JOB_CHECK || st->job == RAID_JOB_REPAIR
                 ? "Check Status"
             : st->job == RAID_JOB_RESHAPE ? "Reshape Status"
                                           : "Rebuild Status",
             st->job_done * 100 / st->job_total, rf->active ? "" : "\n");
  if (rf->active)
    reshape_lines (fp, st);
  fprintf (fp, "%18s : %s\n%18s : %s\n%18s : %" PRIu64 "\n\n", "Name",
           st->name, "UUID", st->uuid, "Events", st->events);
  fprintf (fp, "    Number   RaidDevice State\n");
  for (i = 0; i < st->ndevices; i++) {
    const struct raid_device_status *d = &st->dev[i];
    if (d->role >= 0)
      fprintf (fp, "    %6u   %10d %-24s %s\n", i, d->role, device_words (d),
               d->path);
    else
      fprintf (fp, "    %6u   %10s %-24s %s\n", i, "-", device_words (d),
               d->path);
  }
  /* mdadm lists the journal among the devices, as "journal". */
  if (st->journal_state)
    fprintf (fp, "    %6u   %10s %-24s %s\n", i, "-",
             strcmp (st->journal_state, "active") == 0 ? "journal"
                                                       : st->journal_state,
             st->journal_path);
}
