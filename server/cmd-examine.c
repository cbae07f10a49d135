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
#include "config-file.h"
#include "controllers.h"
#include "json.h"
#include "member.h"
#include "superblock-io.h"
#include "geometry.h"
#include "raid.h"
#include "bitmap-format.h"

static const char *
md_time (uint64_t t, char *buf, size_t len)
{
  time_t secs = (time_t) (t & ((1ULL << 40) - 1));
  struct tm tm;

  strftime (buf, len, "%a %b %e %H:%M:%S %Y", localtime_r (&secs, &tm));
  return buf;
}

/* mdadm's picture of the roles: 'A' for a role some device fills, '.'
 * for one none does (its device failed or was removed). */
static const char *
array_state (const struct md_superblock *sb, char *buf, size_t len)
{
  uint32_t role, dev;

  for (role = 0; role < sb->raid_disks && role + 1 < len; role++) {
    buf[role] = '.';
    for (dev = 0; dev < sb->max_dev; dev++)
      if (sb->dev_roles[dev] == role)
        buf[role] = 'A';
  }
  buf[role] = '\0';
  return buf;
}

static const char *
role_text (uint16_t role, char *buf, size_t len)
{
  if (role == MD_ROLE_SPARE)
    return "spare";
  if (role == MD_ROLE_FAULTY)
    return "faulty";
  if (role == MD_ROLE_JOURNAL)
    return "journal";
  snprintf (buf, len, "Active device %u", role);
  return buf;
}

/* The member's bitmap, as mdadm --examine-bitmap reads it: its header
 * and the count of set bits.  False when there is none to read. */
static bool
read_bitmap (struct member *m, const struct md_superblock *sb,
             struct md_bitmap_header *h, uint64_t *chunks, uint64_t *dirty,
             char *why, size_t len)
{
  uint64_t start = sb->super_offset_sectors * 512 +
    (int64_t) sb->bitmap_offset_sectors * 512, bytes, i;
  uint8_t *image = NULL;
  bool ok = false;

  if (!(sb->feature_map & MD_FEATURE_BITMAP))
    return false;
  image = malloc (4096);
  if (!image || m->ops->pread (m, image, 4096, start) == -1 ||
      md_bitmap_decode (image, h, why, len) == -1)
    goto out;
  *chunks = md_bitmap_chunks (h->sync_size_sectors * 512, h->chunk_bytes);
  bytes = md_bitmap_disk_bytes (*chunks);
  free (image);
  image = malloc (bytes);
  if (!image || m->ops->pread (m, image, bytes, start) == -1)
    goto out;
  for (*dirty = 0, i = 0; i < *chunks; i++)
    *dirty += image[MD_BITMAP_HEADER_BYTES + i / 8] >> (i % 8) & 1;
  ok = true;
 out:
  free (image);
  return ok;
}

/* Array size from the superblock, or 0 when its geometry is not one
 * we support. */
static uint64_t
array_bytes (const struct md_superblock *sb)
{
  struct raid_geometry g = {
    .level = sb->level, .layout = sb->layout, .members = sb->raid_disks,
    .chunk_bytes = (uint64_t) sb->chunk_sectors * 512,
    .member_bytes = md_sb_member_bytes (sb),
  };
  char err[256];

  return geometry_init (&g, err, sizeof err) == 0 ? g.array_bytes : 0;
}

static void
print_text (const char *path, struct member *m, const struct md_superblock *sb)
{
  struct md_bitmap_header bh;
  uint64_t chunks, dirty;
  char why[256];
  char uuid[36], t[64], layout[40], role[32], state[MD_SB_MAX_DEV_LIMIT + 1];
  const struct raid_level *l = raid_level_find (sb->level);

  printf ("%s:\n", path);
  printf ("          Magic : %08x\n", MD_SB_MAGIC);
  printf ("        Version : 1.2\n");
  printf ("    Feature Map : 0x%x\n", sb->feature_map);
  md_uuid_format (sb->set_uuid, uuid);
  printf ("     Array UUID : %s\n", uuid);
  printf ("           Name : %s\n", sb->set_name);
  printf ("  Creation Time : %s\n", md_time (sb->ctime, t, sizeof t));
  printf ("     Raid Level : raid%d\n", sb->level);
  printf ("   Raid Devices : %u\n\n", sb->raid_disks);
  printf (" Avail Dev Size : %" PRIu64 " sectors\n", sb->data_size_sectors);
  printf ("     Array Size : %" PRIu64 " KiB\n", array_bytes (sb) / 1024);
  printf ("  Used Dev Size : %" PRIu64 " sectors\n", sb->size_sectors);
  printf ("    Data Offset : %" PRIu64 " sectors\n", sb->data_offset_sectors);
  printf ("   Super Offset : %" PRIu64 " sectors\n",
          sb->super_offset_sectors);
  printf ("          State : %s\n",
          sb->resync_offset_sectors == MD_RESYNC_CLEAN ? "clean" : "active");
  md_uuid_format (sb->device_uuid, uuid);
  printf ("    Device UUID : %s\n\n", uuid);
  printf ("    Update Time : %s\n", md_time (sb->utime, t, sizeof t));
  printf ("       Checksum : %08x - correct\n", sb->sb_csum);
  printf ("         Events : %" PRIu64 "\n", sb->events);
  printf ("Corrected Reads : %u\n\n", sb->cnt_corrected_read);
  /* A level we do not serve shows what its superblock says. */
  if (!l || l->layouts)
    printf ("         Layout : %s\n",
            raid_layout_name (sb->level, sb->layout, layout, sizeof layout));
  if (!l || l->has_chunk)
    printf ("     Chunk Size : %uK\n\n", sb->chunk_sectors / 2);
  printf ("    Device Role : %s\n", role_text (md_sb_role (sb), role,
                                              sizeof role));
  printf ("    Array State : %s\n", array_state (sb, state, sizeof state));
  if (read_bitmap (m, sb, &bh, &chunks, &dirty, why, sizeof why))
    printf ("   Bitmap Chunk : %uK\n  Bitmap Events : %" PRIu64 "\n   Bitmap Dirty : "
            "%" PRIu64 " of %" PRIu64 " chunks\n", bh.chunk_bytes / 1024,
            bh.events, dirty, chunks);
  else if (sb->feature_map & MD_FEATURE_BITMAP)
    printf ("        Bitmap : unreadable: %s\n", why);
  printf ("\n");
}

static void
print_json (const char *path, struct member *m, const struct md_superblock *sb,
            bool first)
{
  struct md_bitmap_header bh;
  uint64_t chunks, dirty;
  char why[256];
  char uuid[36], layout[40], role[32], state[MD_SB_MAX_DEV_LIMIT + 1];
  uint16_t r = md_sb_role (sb);

  printf ("%s\n  {\"member\": ", first ? "" : ",");
  json_string (stdout, path);
  md_uuid_format (sb->set_uuid, uuid);
  printf (", \"uuid\": \"%s\", \"name\": ", uuid);
  json_string (stdout, sb->set_name);
  printf (", \"level\": %d, \"layout\": ", sb->level);
  json_string (stdout, raid_layout_name (sb->level, sb->layout, layout,
                                         sizeof layout));
  printf (", \"chunk_bytes\": %" PRIu64 ", \"raid_disks\": %u",
          (uint64_t) sb->chunk_sectors * 512, sb->raid_disks);
  printf (", \"dev_number\": %u, \"role\": ", sb->dev_number);
  if (r < MD_ROLE_MAX)
    printf ("%u", r);
  else
    json_string (stdout, role_text (r, role, sizeof role));
  printf (", \"array_state\": \"%s\"", array_state (sb, state, sizeof state));
  printf (", \"events\": %" PRIu64 ", \"corrected_reads\": %u"
          ", \"state\": \"%s\"", sb->events, sb->cnt_corrected_read,
          sb->resync_offset_sectors == MD_RESYNC_CLEAN ? "clean" : "active");
  printf (", \"data_offset_sectors\": %" PRIu64
          ", \"data_size_sectors\": %" PRIu64 ", \"size_sectors\": %" PRIu64
          ", \"array_bytes\": %" PRIu64 ", \"feature_map\": %u"
          ", \"checksum\": \"%08x\"", sb->data_offset_sectors,
          sb->data_size_sectors, sb->size_sectors, array_bytes (sb),
          sb->feature_map, sb->sb_csum);
  if (read_bitmap (m, sb, &bh, &chunks, &dirty, why, sizeof why))
    printf (", \"bitmap\": {\"chunk_bytes\": %u, \"events\": %" PRIu64
            ", \"events_cleared\": %" PRIu64 ", \"chunks\": %" PRIu64
            ", \"dirty\": %" PRIu64 "}", bh.chunk_bytes, bh.events,
            bh.events_cleared, chunks, dirty);
  printf ("}");
}

/* For a config: where its members sit on controllers, and whether the
 * array survives losing one. */
static int
print_controllers (const char *file, bool json, bool first)
{
  struct raid_config cfg;
  struct raid_geometry g;
  char err[1024], why[512], list[512];
  int survives;

  if (raid_config_load (file, &cfg, err, sizeof err) == -1) {
    fprintf (stderr, "nbdraid: %s\n", err);
    return 1;
  }
  if (controllers_shape (&cfg, &g, err, sizeof err) == -1) {
    fprintf (stderr, "nbdraid: %s: %s\n", file, err);
    raid_config_free (&cfg);
    return 1;
  }
  survives = controllers_survive (&g, &cfg, NULL, why, sizeof why);
  controllers_describe (&cfg, list, sizeof list);
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
  raid_config_free (&cfg);
  return 0;
}

static bool
is_config (const char *arg)
{
  size_t n = strlen (arg);
  return n > 5 && strcmp (arg + n - 5, ".conf") == 0;
}

int
cmd_examine (int argc, char **argv)
{
  static const struct option longopts[] = {
    { "json", no_argument, NULL, 'j' },
    { NULL, 0, NULL, 0 },
  };
  struct member_open_options mo = { .readonly = true };
  static struct md_superblock sb;
  bool json = false, first = true;
  int c, status = 0;
  char err[512];

  while ((c = getopt_long (argc, argv, "", longopts, NULL)) != -1) {
    if (c != 'j') {
      fprintf (stderr, "usage: nbdraid examine [--json] MEMBER|CONFIG...\n");
      return 2;
    }
    json = true;
  }
  if (optind == argc) {
    fprintf (stderr, "usage: nbdraid examine [--json] MEMBER...\n");
    return 2;
  }
  if (json)
    printf ("[");
  for (; optind < argc; optind++) {
    const char *path = argv[optind];
    struct member *m;
    bool none;

    if (is_config (path)) {
      status |= print_controllers (path, json, first);
      first = false;
      continue;
    }
    m = member_open (path, &mo, err, sizeof err);
    if (!m || md_sb_read (m, &sb, &none, err, sizeof err) == -1) {
      fprintf (stderr, "nbdraid: %s\n", err);
      status = 1;
    }
    else if (json) {
      print_json (path, m, &sb, first);
      first = false;
    }
    else
      print_text (path, m, &sb);
    member_close (m);
  }
  if (json)
    printf ("\n]\n");
  return status;
}
