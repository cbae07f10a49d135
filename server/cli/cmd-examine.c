/* nbdraid examine: print what members' superblocks say, like
 * mdadm --examine, or as JSON. */
#include <config.h>

#include <getopt.h>
#include <stdlib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "json.h"
#include "raid.h"

/* A superblock time (seconds since the epoch) as mdadm prints it. */
static const char *
md_time (uint64_t t, char *buf, size_t len)
{
  time_t secs = (time_t) t;
  struct tm tm;

  strftime (buf, len, "%a %b %e %H:%M:%S %Y", localtime_r (&secs, &tm));
  return buf;
}

/* The Device Role: "Active device N", or the special role's name. */
static const char *
role_text (const struct raid_member_info *m, char *buf, size_t len)
{
  if (m->role_name)
    return m->role_name;
  snprintf (buf, len, "Active device %u", m->role);
  return buf;
}

/* Print a member's superblock (and bitmap) as mdadm --examine does. */
static void
print_text (const char *path, const struct raid_member_info *m)
{
  const struct raid_level *l = raid_level_find (m->level);
  char t[64], layout[40], role[32];

  printf ("%s:\n", path);
  printf ("          Magic : a92b4efc\n");       /* md v1.2's, checked */
  printf ("        Version : 1.2\n");
  printf ("    Feature Map : 0x%x\n", m->feature_map);
  printf ("     Array UUID : %s\n", m->uuid);
  printf ("           Name : %s\n", m->name);
  printf ("  Creation Time : %s\n", md_time (m->ctime, t, sizeof t));
  printf ("     Raid Level : raid%d\n", m->level);
  printf ("   Raid Devices : %u\n\n", m->raid_disks);
  printf (" Avail Dev Size : %" PRIu64 " sectors\n", m->data_size_sectors);
  printf ("     Array Size : %" PRIu64 " KiB\n", m->array_bytes / 1024);
  printf ("  Used Dev Size : %" PRIu64 " sectors\n", m->size_sectors);
  printf ("    Data Offset : %" PRIu64 " sectors\n", m->data_offset_sectors);
  printf ("   Super Offset : %" PRIu64 " sectors\n", m->super_offset_sectors);
  if (m->has_bitmap)
    printf ("Internal Bitmap : %d sectors from superblock\n",
            m->bitmap_offset_sectors);
  if (m->has_ppl)
    printf ("            PPL : %u sectors at offset %d sectors from "
            "superblock\n",
            m->ppl_size_sectors, m->ppl_offset_sectors);
  if (m->has_recovery_offset)
    printf ("Recovery Offset : %" PRIu64 " sectors\n",
            m->recovery_offset_sectors);
  if (m->journal_device)
    printf ("   Journal Tail : %" PRIu64 " sectors\n", m->journal_tail_sectors);
  if (!m->clean)
    printf ("  Resync Offset : %" PRIu64 " sectors\n",
            m->resync_offset_sectors);
  printf ("          State : %s\n", m->clean ? "clean" : "active");
  printf ("    Device UUID : %s\n", m->device_uuid);
  if (m->devflags & (RAID_DEVFLAG_WRITE_MOSTLY | RAID_DEVFLAG_FAILFAST))
    printf ("          Flags :%s%s\n",
            m->devflags & RAID_DEVFLAG_WRITE_MOSTLY ? " write-mostly" : "",
            m->devflags & RAID_DEVFLAG_FAILFAST ? " failfast" : "");
  if (m->has_owner)
    printf ("          Owner : host %s, pid %" PRIu32 ", %s, last heartbeat %s "
            "(heartbeat %" PRIu64 ", every %" PRIu32 " ms)\n",
            m->owner_host, m->owner_pid,
            m->owner_serving ? "serving" : "stopped",
            md_time (m->owner_time_ms / 1000, t, sizeof t), m->owner_seq,
            m->owner_interval_ms);
  printf ("\n");
  printf ("    Update Time : %s\n", md_time (m->utime, t, sizeof t));
  if (m->checksum == m->checksum_expected)
    printf ("       Checksum : %08x - correct\n", m->checksum);
  else
    printf ("       Checksum : %08x - expected %08x\n", m->checksum,
            m->checksum_expected);
  printf ("         Events : %" PRIu64 "\n", m->events);
  printf ("Corrected Reads : %u\n\n", m->corrected_reads);
  if (l->layouts)
    printf ("         Layout : %s\n",
            raid_layout_name (m->level, m->layout, layout, sizeof layout));
  if (l->has_chunk)
    printf ("     Chunk Size : %" PRIu64 "K\n\n", m->chunk_bytes / 1024);
  printf ("    Device Role : %s\n", role_text (m, role, sizeof role));
  printf ("    Array State : %s ('A' == active, '.' == missing)\n",
          m->array_state);
  if (m->has_bitmap && !m->bitmap_why[0])
    printf ("   Bitmap Chunk : %uK\n  Bitmap Events : %" PRIu64
            "\n   Bitmap Dirty : %" PRIu64 " of %" PRIu64 " chunks\n",
            m->bitmap_chunk_bytes / 1024, m->bitmap_events,
            m->bitmap_dirty, m->bitmap_chunks);
  /* mdadm -X's words. */
  if (m->has_bitmap && !m->bitmap_why[0] && m->bitmap_write_behind)
    printf ("     Write Mode : Allow write behind, max %u\n",
            m->bitmap_write_behind);
  if (m->has_bitmap && m->bitmap_why[0])
    printf ("        Bitmap : unreadable: %s\n", m->bitmap_why);
  printf ("\n");
}

/* Print a member's superblock (and bitmap) as an element of the JSON
 * array; first: no comma before it. */
static void
print_json (const char *path, const struct raid_member_info *m, bool first)
{
  char layout[40];

  printf ("%s\n  {\"member\": ", first ? "" : ",");
  json_string (stdout, path);
  printf (", \"uuid\": \"%s\", \"name\": ", m->uuid);
  json_string (stdout, m->name);
  printf (", \"level\": %d, \"layout\": ", m->level);
  json_string (stdout, raid_layout_name (m->level, m->layout, layout,
                                         sizeof layout));
  printf (", \"chunk_bytes\": %" PRIu64 ", \"raid_disks\": %u",
          m->chunk_bytes, m->raid_disks);
  printf (", \"dev_number\": %u, \"role\": ", m->dev_number);
  if (m->role_name)
    json_string (stdout, m->role_name);
  else
    printf ("%u", m->role);
  printf (", \"array_state\": \"%s\"", m->array_state);
  printf (", \"events\": %" PRIu64 ", \"corrected_reads\": %u"
          ", \"state\": \"%s\"", m->events, m->corrected_reads,
          m->clean ? "clean" : "active");
  printf (", \"resync_offset_sectors\": %" PRIu64, m->resync_offset_sectors);
  if (m->has_recovery_offset)
    printf (", \"recovery_offset_sectors\": %" PRIu64,
            m->recovery_offset_sectors);
  printf (", \"data_offset_sectors\": %" PRIu64
          ", \"data_size_sectors\": %" PRIu64 ", \"size_sectors\": %" PRIu64
          ", \"array_bytes\": %" PRIu64 ", \"feature_map\": %u"
          ", \"checksum\": \"%08x\", \"checksum_expected\": \"%08x\""
          ", \"write_mostly\": %s, \"failfast\": %s",
          m->data_offset_sectors, m->data_size_sectors, m->size_sectors,
          m->array_bytes, m->feature_map, m->checksum, m->checksum_expected,
          m->devflags & RAID_DEVFLAG_WRITE_MOSTLY ? "true" : "false",
          m->devflags & RAID_DEVFLAG_FAILFAST ? "true" : "false");
  if (m->has_bitmap && !m->bitmap_why[0])
    printf (", \"bitmap\": {\"chunk_bytes\": %u, \"events\": %" PRIu64
            ", \"events_cleared\": %" PRIu64 ", \"chunks\": %" PRIu64
            ", \"write_behind\": %u, \"dirty\": %" PRIu64 "}",
            m->bitmap_chunk_bytes, m->bitmap_events,
            m->bitmap_events_cleared, m->bitmap_chunks,
            m->bitmap_write_behind, m->bitmap_dirty);
  if (m->has_ppl)
    printf (", \"ppl\": {\"offset_sectors\": %d, \"size_sectors\": %u}",
            m->ppl_offset_sectors, m->ppl_size_sectors);
  printf (", \"consistency_policy\": \"%s\"", m->has_journal  ? "journal"
                                              : m->has_ppl    ? "ppl"
                                              : m->has_bitmap ? "bitmap"
                                                              : "resync");
  if (m->journal_device)
    printf (", \"journal_tail_sectors\": %" PRIu64, m->journal_tail_sectors);
  if (m->has_owner) {
    printf (", \"owner\": {\"host\": ");
    json_string (stdout, m->owner_host);
    printf (", \"pid\": %" PRIu32 ", \"state\": \"%s\", \"time_ms\": %"
            PRIu64 ", \"heartbeat\": %" PRIu64 ", \"interval_ms\": %" PRIu32
            "}", m->owner_pid, m->owner_serving ? "serving" : "stopped",
            m->owner_time_ms, m->owner_seq, m->owner_interval_ms);
  }
  printf ("}");
}

/* For a config: where its members sit on controllers, and whether the
 * array survives losing one. */
static int
print_controllers (const char *file, bool json, bool first)
{
  struct raid_config cfg;
  char err[1024], why[512], list[512];
  int survives;

  if (raid_config_load (file, &cfg, err, sizeof err) == -1) {
    fprintf (stderr, "nbdraid: %s\n", err);
    return 1;
  }
  survives = raid_controllers_report (&cfg, list, sizeof list, why,
                                      sizeof why);
  raid_config_free (&cfg);
  if (survives == -2) {
    fprintf (stderr, "nbdraid: %s: %s\n", file, why);
    return 1;
  }
  if (json) {
    printf ("%s\n  {\"config\": ", first ? "" : ",");
    json_string (stdout, file);
    printf (", \"controllers\": ");
    json_string (stdout, list);
    printf (", \"survives_controller_loss\": %s}",
            survives == 1 ? "true" : survives == 0 ? "false" : "null");
  }
  else if (survives == -1)
    printf ("%s: no member names a controller\n\n", file);
  else
    printf ("%s:\n    Controllers : %s\nController Loss : %s\n\n", file,
            list, survives ? "survives the loss of any one controller"
            : why);
  return 0;
}

/* An argument ending in .conf names a config, not a member. */
static bool
is_config (const char *arg)
{
  size_t n = strlen (arg);
  return n > 5 && strcmp (arg + n - 5, ".conf") == 0;
}

/* nbdraid examine [--json] MEMBER|CONFIG...: each member's superblock,
 * each config's controllers; 1 if any could not be read or is damaged
 * (one whose checksum alone is wrong is shown all the same, as mdadm
 * shows it). */
int
cmd_examine (int argc, char **argv)
{
  static const struct option longopts[] = {
    { "json", no_argument, NULL, 'j' },
    { NULL, 0, NULL, 0 },
  };
  static struct raid_member_info info;
  bool json = false, first = true;
  int c, r, status = 0;
  char err[512];

  while ((c = getopt_long (argc, argv, "", longopts, NULL)) != -1) {
    if (c != 'j') {
      fprintf (stderr, "usage: nbdraid examine [--json] MEMBER|CONFIG...\n");
      return 2;
    }
    json = true;
  }
  if (optind == argc) {
    fprintf (stderr, "usage: nbdraid examine [--json] MEMBER|CONFIG...\n");
    return 2;
  }
  if (json)
    printf ("[");
  for (; optind < argc; optind++) {
    const char *path = argv[optind];

    if (is_config (path)) {
      status |= print_controllers (path, json, first);
      first = false;
      continue;
    }
    r = raid_examine (path, &info, err, sizeof err);
    if (r != 0) {
      fprintf (stderr, "nbdraid: %s\n", err);
      status = 1;
    }
    if (r == -1)
      continue;
    if (json) {
      print_json (path, &info, first);
      first = false;
    }
    else
      print_text (path, &info);
  }
  if (json)
    printf ("\n]\n");
  return status;
}
