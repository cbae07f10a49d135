/* nbdraid: what a member's md superblock and bitmap say, for nbdraid
 * examine (mdadm --examine and --examine-bitmap).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitmap-format.h"
#include "examine.h"
#include "geometry.h"
#include "member.h"
#include "raid.h"
#include "owner.h"
#include "superblock-io.h"

_Static_assert (RAID_MD_MAX_DEV == MD_SB_MAX_DEV_LIMIT,
                "raid_member_info's array_state and dev_roles hold every "
                "md role");

/* mdadm's picture of the roles: 'A' for a role some device fills, '.'
 * for one none does (its device failed or was removed). */
static void
array_state (const struct md_superblock *sb, char *buf)
{
  uint32_t role, dev;

  for (role = 0; role < sb->raid_disks; role++) {
    buf[role] = '.';
    for (dev = 0; dev < sb->max_dev; dev++)
      if (sb->dev_roles[dev] == role)
        buf[role] = 'A';
  }
  buf[role] = '\0';
}

/* mdadm's word for a role that is not a slot (spare, faulty, journal);
 * NULL for a slot number. */
static const char *
role_name (uint16_t role)
{
  switch (role) {
  case MD_ROLE_SPARE:
    return "spare";
  case MD_ROLE_FAULTY:
    return "faulty";
  case MD_ROLE_JOURNAL:
    return "journal";
  default:
    return NULL;
  }
}

/* The bitmap's header and its count of set bits; false, with why, when
 * it cannot be read. */
static bool
read_bitmap (struct member *m, const struct md_superblock *sb,
             struct raid_member_info *info)
{
  uint64_t start = sb->super_offset_sectors * 512 +
    (int64_t) sb->bitmap_offset_sectors * 512, bytes, i;
  struct md_bitmap_header h;
  uint8_t *image = malloc (4096);
  bool ok = false;

  if (!image || m->ops->pread (m, image, 4096, start) == -1) {
    snprintf (info->bitmap_why, sizeof info->bitmap_why, "pread at %"
              PRIu64 ": %s", start, strerror (errno));
    goto out;
  }
  if (md_bitmap_decode (image, &h, info->bitmap_why,
                        sizeof info->bitmap_why) == -1)
    goto out;
  info->bitmap_chunk_bytes = h.chunk_bytes;
  info->bitmap_events = h.events;
  info->bitmap_write_behind = h.write_behind;
  info->bitmap_events_cleared = h.events_cleared;
  info->bitmap_chunks = md_bitmap_chunks (h.sync_size_sectors * 512,
                                          h.chunk_bytes);
  bytes = md_bitmap_disk_bytes (info->bitmap_chunks);
  free (image);
  image = malloc (bytes);
  if (!image || m->ops->pread (m, image, bytes, start) == -1) {
    snprintf (info->bitmap_why, sizeof info->bitmap_why, "pread of %"
              PRIu64 " bytes at %" PRIu64 ": %s", bytes, start,
              strerror (errno));
    goto out;
  }
  for (i = 0; i < info->bitmap_chunks; i++)
    info->bitmap_dirty += image[MD_BITMAP_HEADER_BYTES + i / 8] >> (i % 8) & 1;
  ok = true;
 out:
  free (image);
  return ok;
}

/* Fill info from the member's superblock, and from its bitmap when it
 * has one. */
static void
describe (struct member *m, const struct md_superblock *sb,
          struct raid_member_info *info)
{
  struct raid_geometry g = {
    .level = sb->level, .layout = sb->layout, .members = sb->raid_disks,
    .chunk_bytes = (uint64_t) sb->chunk_sectors * 512,
    .member_bytes = md_sb_member_bytes (sb),
  };
  char why[256];

  memset (info, 0, sizeof *info);
  info->feature_map = sb->feature_map;
  md_uuid_format (sb->set_uuid, info->uuid);
  snprintf (info->name, sizeof info->name, "%s", sb->set_name);
  info->ctime = sb->ctime & ((1ULL << 40) - 1);   /* md: low 40 bits */
  info->utime = sb->utime & ((1ULL << 40) - 1);
  info->level = sb->level;
  info->layout = sb->layout;
  info->raid_disks = sb->raid_disks;
  info->chunk_bytes = (uint64_t) sb->chunk_sectors * 512;
  info->data_size_sectors = sb->data_size_sectors;
  info->size_sectors = sb->size_sectors;
  info->data_offset_sectors = sb->data_offset_sectors;
  info->super_offset_sectors = sb->super_offset_sectors;
  info->clean = sb->resync_offset_sectors == MD_RESYNC_CLEAN;
  info->resync_offset_sectors = sb->resync_offset_sectors;
  info->has_recovery_offset = sb->feature_map & MD_FEATURE_RECOVERY_OFFSET;
  info->recovery_offset_sectors = sb->recovery_offset_sectors;
  info->bitmap_offset_sectors = sb->bitmap_offset_sectors;
  md_uuid_format (sb->device_uuid, info->device_uuid);
  info->checksum = sb->sb_csum;
  info->checksum_expected = sb->csum_expected;
  info->devflags = sb->devflags;
  info->events = sb->events;
  info->corrected_reads = sb->cnt_corrected_read;
  info->dev_number = sb->dev_number;
  info->role = md_sb_role (sb);
  info->role_name = role_name (info->role);
  array_state (sb, info->array_state);
  /* decode refuses more, but the copy must not depend on it */
  info->max_dev = sb->max_dev < RAID_MD_MAX_DEV ? sb->max_dev
    : RAID_MD_MAX_DEV;
  memcpy (info->dev_roles, sb->dev_roles,
          info->max_dev * sizeof *info->dev_roles);
  info->array_bytes = geometry_init (&g, why, sizeof why) == 0
    ? g.array_bytes : 0;
  info->has_bitmap = sb->feature_map & MD_FEATURE_BITMAP;
  info->has_ppl = md_sb_has_ppl (sb);
  info->ppl_offset_sectors = md_sb_ppl_offset (sb);
  info->ppl_size_sectors = md_sb_ppl_size (sb);
  info->has_journal = md_sb_has_journal (sb);
  info->journal_device = info->role == MD_ROLE_JOURNAL;
  if (info->journal_device)
    info->journal_tail_sectors = sb->recovery_offset_sectors;
  if (info->has_bitmap && !read_bitmap (m, sb, info) &&
      !info->bitmap_why[0])
    snprintf (info->bitmap_why, sizeof info->bitmap_why, "%s",
              strerror (ENOMEM));
}

/* The owner record, if the member carries one of this array. */
static void
describe_owner (struct member *m, const struct md_superblock *sb,
                struct raid_member_info *info)
{
  struct owner_record rec;

  info->has_owner = md_sb_read_owner (m, &rec) == 1 &&
    memcmp (rec.set_uuid, sb->set_uuid, 16) == 0;
  if (!info->has_owner)
    return;
  info->owner_serving = rec.state == OWNER_SERVING;
  snprintf (info->owner_host, sizeof info->owner_host, "%s", rec.host);
  info->owner_pid = rec.pid;
  info->owner_interval_ms = rec.interval_ms;
  info->owner_time_ms = rec.time_ms;
  info->owner_seq = rec.seq;
}

int
member_examine (struct member *m, struct raid_member_info *info, char *err,
                size_t errlen)
{
  struct md_superblock *sb = malloc (sizeof *sb);
  bool none;
  int r;

  if (!sb) {
    snprintf (err, errlen, "%s: %s", m->name, strerror (ENOMEM));
    return -1;
  }
  r = md_sb_read_examine (m, sb, &none, err, errlen);
  if (r >= 0) {
    describe (m, sb, info);
    describe_owner (m, sb, info);
  }
  free (sb);
  if (r == -1)
    errno = none ? ENODATA : EIO;
  return r;
}

int
raid_examine (const char *spec, struct raid_member_info *info, char *err,
              size_t errlen)
{
  struct member_open_options mo = {
    .readonly = true, .unlocked = true, .nbd_timeout_s = RAID_NBD_TIMEOUT_S,
    .connect_timeout_s = RAID_NBD_CONNECT_TIMEOUT_S,
  };
  struct member *m = member_open (spec, &mo, err, errlen);
  int r, saved;

  if (!m) {
    errno = EIO;                /* not ENODATA: it could not be read */
    return -1;
  }
  r = member_examine (m, info, err, errlen);
  saved = errno;
  member_close (m);
  errno = saved;
  return r;
}

unsigned
raid_member_role (const struct raid_member_info *ref,
                  const struct raid_member_info *m, const char **name)
{
  unsigned role = m->dev_number < ref->max_dev
    ? ref->dev_roles[m->dev_number] : m->role;

  *name = role_name (role);
  return role;
}
