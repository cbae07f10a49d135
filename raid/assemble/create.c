/* nbdraid: creating an array (nbdraid create).
 *
 * Every member is opened and checked before the first byte is written:
 * a bad config or a wrong disk leaves every member untouched.  A nested
 * stack is created inner arrays first; if the outer array is then
 * refused, what the inner ones wrote is put back (create-undo.h).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "array.h"
#include "bitmap-format.h"
#include "controllers.h"
#include "create-undo.h"
#include "ppl-format.h"
#include "superblock-io.h"

#define SECTOR 512ULL

struct creation {
  struct raid_config *cfg;
  const struct raid_config *top;        /* holds the nested arrays */
  const struct raid_create_options *opts;
  struct raid_array **children;         /* nested arrays, opened */
  unsigned nchildren;
  struct member **members;      /* members then spares */
  unsigned n;
  struct member *journal;       /* the journal device, if any */
  struct create_undo *undo;     /* what the whole create overwrote */
  int rebuild;                  /* a role rebuilt at first start, or -1 */
  char *err;
  size_t errlen;
};

/* Write the reason the create is refused into c's err; returns -1. */
static int
refuse (struct creation *c, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (c->err, c->errlen, fmt, ap);
  va_end (ap);
  return -1;
}

/* Log a note (RAID_LOG_INFO) through the options' callback, if any. */
static void
note (struct creation *c, const char *fmt, ...)
{
  char msg[512];
  va_list ap;

  if (!c->opts->log)
    return;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  c->opts->log (c->opts->log_opaque, RAID_LOG_INFO, msg);
}

/* The config's line for device i: members, then spares. */
static const struct raid_member_spec *
spec_of (const struct creation *c, unsigned i)
{
  return i < c->cfg->nmembers ? &c->cfg->members[i]
    : &c->cfg->spares[i - c->cfg->nmembers];
}

/* mdadm's space for a bitmap: choose_bm_space() in super1.c. */
static uint64_t
bitmap_space_sectors (uint64_t dev_sectors)
{
  if (dev_sectors < 64 * 2)
    return 0;
  if (dev_sectors - 64 * 2 >= 200ULL * 1024 * 1024 * 2)
    return 128 * 2;
  if (dev_sectors - 4 * 2 > 8ULL * 1024 * 1024 * 2)
    return 64 * 2;
  return 4 * 2;
}

/* mdadm's default v1.2 data offset: reshape headroom shrunk for small
 * devices, plus superblock and bitmap (or PPL) space, rounded up to
 * 1 MiB. */
static uint64_t
data_offset_sectors (uint64_t dev_sectors, uint64_t chunk_sectors, bool ppl)
{
  uint64_t headroom = 128 * 1024 * 2, off;

  while ((headroom << 10) > dev_sectors &&
         (chunk_sectors == 0 || headroom / 2 >= chunk_sectors * 2))
    headroom >>= 1;
  off = 12 * 2 + (ppl ? PPL_AREA_SECTORS : bitmap_space_sectors (dev_sectors))
        + headroom;
  return (off + 2047) / 2048 * 2048;
}

static int create_in (struct raid_config *cfg, const struct raid_config *top,
                      const struct raid_create_options *opts,
                      struct create_undo *undo, char *err, size_t errlen);

/* Nested arrays: create the array an "array:NAME" member names, then
 * open it, so this array's superblocks can be written on it. */
static struct member *
create_nested (void *ctx, const char *spec, const char *name, char *err,
               size_t errlen)
{
  struct creation *c = ctx;
  struct raid_config *g = raid_config_find_group (c->top, name);
  struct raid_options ao = { .log = c->opts->log,
    .log_opaque = c->opts->log_opaque };
  struct raid_array *a;

  if (!g) {
    snprintf (err, errlen, "%s: no such nested array", spec);
    return NULL;
  }
  if (create_in (g, c->top, c->opts, c->undo, err, errlen) == -1 ||
      !(a = array_assemble (g, c->top, &ao, err, errlen)))
    return NULL;
  if (raid_start (a) == -1) {
    snprintf (err, errlen, "array %s: %s", name, strerror (errno));
    raid_close (a);
    return NULL;
  }
  c->children[c->nchildren++] = a;
  return member_array_open (a, spec, err, errlen);
}

/* Refuse a config listing one file or device twice, by two names. */
static int
check_distinct (struct creation *c)
{
  unsigned a, b;

  if (member_find_duplicate (c->members, c->n, &a, &b))
    return refuse (c, "%s and %s are the same %s", spec_of (c, a)->path,
                   spec_of (c, b)->path, c->members[a]->identity[0]
                   ? "file" : "device");
  return 0;
}

/* Whether the members created hold redundancy to make consistent: a
 * further role could still be lost.  Without any (RAID0, RAID5 less a
 * member, a RAID1 of one) every state of the blocks is consistent. */
static bool
has_redundancy (const struct raid_geometry *g, const struct member_set *gone)
{
  struct member_set more;
  unsigned m;

  for (m = 0; m < g->members; m++)
    if (!member_set_has (gone, m)) {
      more = *gone;
      member_set_add (&more, m);
      if (geometry_survives (g, more.bits))
        return true;
    }
  return false;
}

/* mdadm's "missing": roles created with no device, for a device added
 * later to be rebuilt into (a disk still holding the data to copy in,
 * say).  The array must be able to run without them.  A parity array
 * that keeps some redundancy (RAID6 less one) cannot be resynced while
 * degraded, so, as mdadm does, its last member there is rebuilt from
 * the others at first start instead, which leaves every stripe
 * consistent: c->rebuild. */
static int
check_missing (struct creation *c, struct member_set *gone)
{
  const struct raid_config *cfg = c->cfg;
  struct raid_geometry shape;
  char roles[256];
  size_t used = 0;
  unsigned i;
  int last = 0;

  memset (gone, 0, sizeof *gone);
  roles[0] = '\0';
  c->rebuild = -1;
  for (i = 0; i < cfg->nmembers; i++)
    if (cfg->members[i].missing) {
      member_set_add (gone, i);
      last = cfg->members[i].line;
      if (used < sizeof roles)
        used += (size_t) snprintf (roles + used, sizeof roles - used,
                                   "%s%u", used ? ", " : "", i);
    }
  if (!last)
    return 0;
  if (controllers_shape (cfg, &shape, c->err, c->errlen) == -1)
    return -1;
  if (!geometry_survives (&shape, gone->bits))
    return refuse (c, "%s:%d: member = missing: RAID%d of %u members "
                   "cannot lose role%s %s; some of its data would have "
                   "no copy", cfg->file, last, cfg->level, cfg->nmembers,
                   member_set_count (gone) == 1 ? "" : "s", roles);
  if (shape.parity_members && has_redundancy (&shape, gone) &&
      !c->opts->assume_clean)
    for (i = cfg->nmembers; i-- > 0 && c->rebuild < 0;)
      if (!member_set_has (gone, i))
        c->rebuild = (int) i;
  note (c, "array %s is created degraded, without role%s %s: nbdraid add "
        "rebuilds a device into %s", cfg->name,
        member_set_count (gone) == 1 ? "" : "s", roles,
        member_set_count (gone) == 1 ? "it" : "them");
  if (c->rebuild >= 0)
    note (c, "the server first rebuilds member %d (%s) from the others, "
          "as mdadm does: that makes its parity consistent", c->rebuild,
          cfg->members[c->rebuild].path);
  return 0;
}

/* Open the journal device as open_all opens the members. */
static int
open_journal (struct creation *c, const struct member_open_options *mo,
              struct md_superblock *sb)
{
  const char *path = c->cfg->journal_path;
  char why[512];
  bool none;

  c->journal = member_open (path, mo, c->err, c->errlen);
  if (!c->journal)
    return -1;
  if (c->opts->force)
    return 0;
  if (md_sb_read (c->journal, sb, &none, why, sizeof why) == 0)
    return refuse (c,
                   "%s already holds an md superblock (name '%s'); use "
                   "--force to overwrite it",
                   path, sb->set_name);
  if (!none)
    return refuse (c,
                   "%s: has a damaged md superblock (%s); use --force "
                   "to overwrite it",
                   path, why);
  return 0;
}

/* The journal device holds a log of two whole stripes at least, after
 * the same superblock area as the members (mdadm --write-journal). */
static int
check_journal_size (struct creation *c, const struct raid_geometry *g,
                    uint64_t data_offset)
{
  uint64_t need
      = data_offset + journal_min_area_bytes (g->members, g->chunk_bytes);

  if (!c->journal || c->journal->size_bytes >= need)
    return 0;
  return refuse (c,
                 "%s:%d: journal %s is too small: %" PRIu64 " bytes; "
                 "RAID%d of %u members with %" PRIu64 "K chunks needs at "
                 "least %" PRIu64 " (%" PRIu64 " for the superblock area "
                 "and the log of two whole stripes)",
                 c->cfg->file, c->cfg->journal_line, c->cfg->journal_path,
                 c->journal->size_bytes, g->level, g->members,
                 g->chunk_bytes / 1024, need, data_offset);
}

/* Open every device to be written; unless --force, refuse any that
 * holds an md superblock, even a damaged one. */
static int
open_all (struct creation *c)
{
  struct member_open_options mo;
  struct md_superblock *sb = malloc (sizeof *sb);
  char why[512], uuid[36];
  unsigned i;
  bool none;

  if (!sb)
    return refuse (c, "%s", strerror (ENOMEM));
  member_options_from_config (c->cfg, false, &mo);
  mo.open_nested = create_nested;
  mo.nested_ctx = c;
  for (i = 0; i < c->n; i++) {
    const char *path = spec_of (c, i)->path;

    if (spec_of (c, i)->missing)
      continue;                 /* check_missing let the array lose it */
    c->members[i] = member_open (path, &mo, c->err, c->errlen);
    if (!c->members[i])
      goto fail;
    if (md_sb_read (c->members[i], sb, &none, why, sizeof why) == 0) {
      if (c->opts->force)
        continue;
      md_uuid_format (sb->set_uuid, uuid);
      refuse (c, "%s already holds an md superblock (array %s, name '%s'); "
              "use --force to overwrite it", path, uuid, sb->set_name);
      goto fail;
    }
    if (!none && !c->opts->force) {
      refuse (c, "%s: has a damaged md superblock (%s); use --force to "
              "overwrite it", path, why);
      goto fail;
    }
  }
  if (c->cfg->journal_path && open_journal (c, &mo, sb) == -1)
    goto fail;
  free (sb);
  return check_distinct (c);
 fail:
  free (sb);
  return -1;
}

/* The shared spares must hold no md superblock: check that (refusing
 * one that does, unless --force), or wipe the ones that do. */
static int
clear_shared_spares (struct creation *c, bool wipe)
{
  struct member_open_options mo;
  struct md_superblock *sb = malloc (sizeof *sb);
  char why[512];
  unsigned i;
  int r = sb ? 0 : refuse (c, "%s", strerror (ENOMEM));

  member_options_from_config (c->cfg, false, &mo);
  for (i = 0; i < c->cfg->nspares && r == 0; i++) {
    const char *path = c->cfg->spares[i].path;
    struct member *m = member_open (path, &mo, c->err, c->errlen);
    bool none = false;

    if (!m)
      r = -1;
    else if (md_sb_read (m, sb, &none, why, sizeof why) == -1 && none)
      ;                         /* nothing to clear */
    else if (!c->opts->force)
      r = refuse (c, "%s already holds an md superblock; use --force to "
                  "wipe it (a shared spare holds none)", path);
    else if (wipe && (undo_save (c->undo, m, MD_SB_OFFSET_BYTES,
                                 MD_SB_BLOCK_BYTES) == -1 ||
                      md_sb_wipe (m) == -1))
      r = refuse (c, "%s: wiping its md superblock: %s", path,
                  strerror (errno));
    if (m)
      undo_forget_member (c->undo, m);
    member_close (m);
  }
  free (sb);
  return r;
}

/* Size the array from the smallest member, as md does. */
static int
plan_geometry (struct creation *c, struct raid_geometry *g,
               uint64_t *data_offset)
{
  const struct raid_config *cfg = c->cfg;
  const struct raid_level *l = raid_level_find (cfg->level);
  uint64_t round = l->has_chunk ? cfg->chunk_bytes : UNCHUNKED_ROUND_BYTES;
  uint64_t smallest = UINT64_MAX, need;
  unsigned i, which = 0;

  for (i = 0; i < c->n; i++)
    if (c->members[i] && c->members[i]->size_bytes < smallest) {
      smallest = c->members[i]->size_bytes;
      which = i;
    }
  *data_offset = data_offset_sectors (smallest / SECTOR,
                                      cfg->chunk_bytes / SECTOR, cfg->ppl)
                 * SECTOR;
  need = *data_offset + round;
  if (smallest < need)
    return refuse (c, "%s is too small: %" PRIu64 " bytes, each member "
                   "needs at least %" PRIu64 " (%" PRIu64 " for the "
                   "superblock area and one %s)", spec_of (c, which)->path,
                   smallest, need, *data_offset,
                   l->has_chunk ? "chunk" : "64K unit");
  for (i = 0; i < c->n; i++)
    if (c->members[i] && c->members[i]->size_bytes != smallest) {
      note (c, "members differ in size; using the smallest, %s: %" PRIu64
            " bytes", spec_of (c, which)->path, smallest);
      break;
    }

  memset (g, 0, sizeof *g);
  g->level = cfg->level;
  g->layout = cfg->layout;
  g->members = cfg->nmembers;
  g->chunk_bytes = cfg->chunk_bytes;
  g->member_bytes = (smallest - *data_offset) / round * round;
  return geometry_init (g, c->err, c->errlen);
}

/* Report, and with --arrange fix, how the members sit on controllers;
 * with --strict-controllers refuse an array a controller loss fails. */
static int
plan_controllers (struct creation *c, const struct raid_geometry *g)
{
  unsigned order[RAID_MAX_MEMBERS], role;
  struct member *opened[RAID_MAX_MEMBERS];
  char why[512], list[512];
  int survives = controllers_survive (g, c->cfg, NULL, why, sizeof why);

  if (survives == -1)
    return 0;                   /* no controllers named */
  if (survives == 0 && c->opts->arrange &&
      controllers_arrange (g, c->cfg, order) == 0) {
    if (undo_save_config (c->undo, c->cfg->file) == -1)
      return refuse (c, "%s: %s", c->cfg->file, strerror (errno));
    if (raid_config_reorder (c->cfg, order, c->err, c->errlen) == -1)
      return -1;
    for (role = 0; role < c->cfg->nmembers; role++)
      opened[role] = c->members[order[role]];
    memcpy (c->members, opened, c->cfg->nmembers * sizeof *opened);
    note (c, "rearranged the members of %s across controllers", c->cfg->file);
    survives = 1;
  }
  controllers_describe (c->cfg, list, sizeof list);
  if (survives)
    note (c, "survives the loss of any one controller: %s", list);
  else if (c->opts->strict_controllers)
    return refuse (c, "%s: %s%s", c->cfg->file, why, c->opts->arrange
                   ? ", and no order of the members avoids it"
                   : "; try --arrange");
  else
    note (c, "warning: %s%s", why, c->opts->arrange
          ? ", and no order of the members avoids it" : "; try --arrange");
  return 0;
}

/* The bitmap chunk: the config's, or mdadm's default of 64 MiB doubled
 * until the bits fit the space before the data.  0 with err set if the
 * config's is too small for the array. */
static uint64_t
bitmap_chunk (struct creation *c, const struct raid_geometry *g,
              uint64_t data_offset)
{
  uint64_t sync = geometry_sync_bytes (g), chunk = c->cfg->bitmap_chunk_bytes;
  uint64_t room = data_offset - MD_SB_OFFSET_BYTES -
    MD_BITMAP_OFFSET_SECTORS * 512;

  if (!chunk)
    for (chunk = 64 << 20;
         md_bitmap_disk_bytes (md_bitmap_chunks (sync, chunk)) > room;
         chunk *= 2)
      ;
  if (md_bitmap_disk_bytes (md_bitmap_chunks (sync, chunk)) > room) {
    refuse (c, "%s:%d: bitmap-chunk %" PRIu64 "K is too small for this "
            "array: %" PRIu64 " bits need %" PRIu64 " bytes, the space "
            "before the data holds %" PRIu64, c->cfg->file,
            c->cfg->bitmap_chunk_line, chunk / 1024,
            md_bitmap_chunks (sync, chunk),
            md_bitmap_disk_bytes (md_bitmap_chunks (sync, chunk)), room);
    return 0;
  }
  return chunk;
}

/* md's bitmap image: header (with the write-behind limit, as mdadm
 * --write-behind puts it there), then a bit per chunk, all set when the
 * array still needs its first sync. */
static uint8_t *
bitmap_image (const struct md_superblock *sb, const struct raid_geometry *g,
              uint64_t chunk, uint32_t write_behind, bool dirty,
              uint64_t *bytes)
{
  uint64_t chunks = md_bitmap_chunks (geometry_sync_bytes (g), chunk), i;
  struct md_bitmap_header h = {
    .events = sb->events, .events_cleared = sb->events,
    .sync_size_sectors = geometry_sync_bytes (g) / 512,
    .chunk_bytes = (uint32_t) chunk, .daemon_sleep_s = 5,
    .write_behind = write_behind,
  };
  uint8_t *image;

  *bytes = md_bitmap_disk_bytes (chunks);
  if (posix_memalign ((void **) &image, 4096, *bytes) != 0)
    return NULL;
  memset (image, 0, *bytes);
  memcpy (h.uuid, sb->set_uuid, 16);
  md_bitmap_encode (&h, image);
  for (i = 0; dirty && i < chunks; i++)
    image[MD_BITMAP_HEADER_BYTES + i / 8] |= (uint8_t) (1 << (i % 8));
  return image;
}

/* md's empty partial parity log area (mdadm's write_init_ppl1): zeros
 * but a header with no entries at its start. */
static uint8_t *
ppl_image (const struct md_superblock *sb, uint64_t *bytes)
{
  struct ppl_header h = { .signature = ppl_signature (sb->set_uuid) };
  uint8_t *image;

  *bytes = md_sb_ppl_size (sb) * SECTOR;
  if (posix_memalign ((void **)&image, 4096, *bytes) != 0)
    return NULL;
  memset (image, 0, *bytes);
  ppl_header_encode (&h, image);
  return image;
}

/* Fill uuid from getrandom, however many calls it takes. */
static void
random_uuid (uint8_t uuid[16])
{
  size_t got = 0;

  while (got < 16) {
    ssize_t r = getrandom (uuid + got, 16 - got, 0);
    if (r > 0)
      got += (size_t) r;
  }
}

/* The journal device's superblock: the members', with its own device
 * number and data area, and the log's tail at the area's start.  The
 * size stays the members' (mdadm's compare_super1 wants it equal).  The log
 * itself starts at the first assembly (md's r5l_load_log). */
static int
write_journal_superblock (struct creation *c, struct md_superblock *sb,
                          uint64_t data_offset)
{
  struct member *m = c->journal;

  sb->dev_number = c->n;
  sb->devflags = 0;
  sb->feature_map &= ~MD_FEATURE_RECOVERY_OFFSET;
  sb->recovery_offset_sectors = 0;
  random_uuid (sb->device_uuid);
  sb->data_size_sectors = (m->size_bytes - data_offset) / SECTOR;
  if (undo_save (c->undo, m, MD_SB_OFFSET_BYTES, MD_SB_BLOCK_BYTES) == -1
      || undo_save (c->undo, m, data_offset, R5L_BLOCK_BYTES) == -1
      || m->ops->pwrite (m, (uint8_t[R5L_BLOCK_BYTES]){ 0 }, R5L_BLOCK_BYTES,
                         data_offset)
             == -1
      || md_sb_write (m, sb, NULL) == -1 || m->ops->flush (m) == -1)
    return refuse (c, "%s: writing the journal's superblock: %s", m->name,
                   strerror (errno));
  return 0;
}

/* Write the new superblocks (and bitmaps) on every device opened,
 * saving first what each held, for the undo. */
static int
write_superblocks (struct creation *c, const struct raid_geometry *g,
                   uint64_t data_offset, uint64_t bitmap_chunk_bytes,
                   bool clean)
{
  const struct raid_config *cfg = c->cfg;
  struct md_superblock *sb = calloc (1, sizeof *sb);
  uint8_t *image = NULL;
  uint64_t image_bytes = 0, written = MD_SB_BLOCK_BYTES;
  /* The bitmap or the PPL area, both this far after the superblock. */
  uint64_t image_offset = MD_SB_OFFSET_BYTES + MD_BITMAP_OFFSET_SECTORS * 512;
  unsigned i;
  int r = -1;

  if (!sb)
    return refuse (c, "%s", strerror (ENOMEM));
  random_uuid (sb->set_uuid);
  snprintf (sb->set_name, sizeof sb->set_name, "%s", cfg->name);
  /* ctime in whole seconds, as mdadm and the kernel write it: md takes
   * all 64 bits for the array's ctime and mdadm --grow hands back the
   * low 32 (SET_ARRAY_INFO), which must match, or md refuses the grow
   * (EINVAL). */
  sb->utime = md_time_now ();
  sb->ctime = sb->utime & ((1ULL << 40) - 1);
  sb->level = cfg->level;
  sb->layout = g->lvl->layouts ? cfg->layout : 0;
  sb->size_sectors = g->member_bytes / SECTOR;
  sb->chunk_sectors = (uint32_t) (cfg->chunk_bytes / SECTOR);
  sb->raid_disks = cfg->nmembers;
  sb->data_offset_sectors = data_offset / SECTOR;
  sb->super_offset_sectors = MD_SB_OFFSET_SECTORS;
  sb->events = 1;
  sb->resync_offset_sectors = clean ? MD_RESYNC_CLEAN : 0;
  sb->max_dev = c->n + (c->journal != NULL) > MD_SB_DEFAULT_MAX_DEV
                    ? c->n + (c->journal != NULL)
                    : MD_SB_DEFAULT_MAX_DEV;
  /* A missing role's device number is on record as failed, so neither
   * nbdraid nor mdadm waits for a device to fill it. */
  for (i = 0; i < sb->max_dev; i++)
    sb->dev_roles[i] = i >= cfg->nmembers ? MD_ROLE_SPARE
      : cfg->members[i].missing ? MD_ROLE_FAULTY : i;
  /* mdadm --write-journal: the journal device takes the device number
   * after the members and spares, with md's journal role and feature
   * on every device. */
  if (c->journal) {
    sb->dev_roles[c->n] = MD_ROLE_JOURNAL;
    sb->feature_map |= MD_FEATURE_JOURNAL;
  }
  if (cfg->bitmap) {
    sb->feature_map |= MD_FEATURE_BITMAP;
    sb->bitmap_offset_sectors = MD_BITMAP_OFFSET_SECTORS;
    image = bitmap_image (sb, g, bitmap_chunk_bytes, cfg->write_behind,
                          !clean, &image_bytes);
    if (!image) {
      refuse (c, "%s", strerror (ENOMEM));
      goto out;
    }
  }
  else if (cfg->ppl) {
    sb->feature_map |= MD_FEATURE_PPL;
    md_sb_set_ppl (sb, PPL_OFFSET_SECTORS, PPL_AREA_SECTORS);
    if (!(image = ppl_image (sb, &image_bytes))) {
      refuse (c, "%s", strerror (ENOMEM));
      goto out;
    }
  }
  if (image_offset - MD_SB_OFFSET_BYTES + image_bytes > written)
    written = image_offset - MD_SB_OFFSET_BYTES + image_bytes;

  for (i = 0; i < c->n; i++) {
    struct member *m = c->members[i];

    if (!m)
      continue;
    sb->dev_number = i;
    sb->devflags = i < c->cfg->nmembers ? c->cfg->members[i].devflags : 0;
    /* Rebuilt from 0 at first start (check_missing). */
    sb->feature_map &= ~MD_FEATURE_RECOVERY_OFFSET;
    if ((int) i == c->rebuild)
      sb->feature_map |= MD_FEATURE_RECOVERY_OFFSET;
    random_uuid (sb->device_uuid);
    /* Zoned (RAID0): equal data sizes, so md sees a single zone. */
    sb->data_size_sectors = g->lvl->zoned ? g->member_bytes / SECTOR
      : (m->size_bytes - data_offset) / SECTOR;
    if (undo_save (c->undo, m, MD_SB_OFFSET_BYTES, written) == -1
        || (image && m->ops->pwrite (m, image, image_bytes, image_offset) == -1)
        || md_sb_write (m, sb, NULL) == -1 || m->ops->flush (m) == -1) {
      refuse (c, "%s: writing the superblock%s: %s", m->name,
              cfg->bitmap ? " and bitmap"
              : cfg->ppl  ? " and PPL"
                          : "",
              strerror (errno));
      goto out;
    }
  }
  if (c->journal && write_journal_superblock (c, sb, data_offset) == -1)
    goto out;
  r = 0;
 out:
  free (image);
  free (sb);
  return r;
}

int
raid_create (struct raid_config *cfg,
             const struct raid_create_options *opts, char *err,
             size_t errlen)
{
  struct create_undo undo = { 0 };
  int r;

  member_options_from_config (cfg, false, &undo.mo);
  r = create_in (cfg, cfg, opts, &undo, err, errlen);
  undo_free (&undo);
  return r;
}

/* After a refusal, put back what was written (open_only: on members
 * still open); say so if that fails. */
static void
put_back (struct create_undo *undo, bool open_only, char *err,
          size_t errlen)
{
  char why[512];
  size_t used = strlen (err);

  if (undo_replay (undo, open_only, why, sizeof why) == -1 && used < errlen)
    snprintf (err + used, errlen - used, "; and the devices could not be "
              "put back as they were: %s", why);
}

/* Create cfg's array, its nested arrays first (create_nested); when the
 * top array is refused, put back everything written. */
static int
create_in (struct raid_config *cfg, const struct raid_config *top,
           const struct raid_create_options *opts, struct create_undo *undo,
           char *err, size_t errlen)
{
  /* With nested arrays the top level's spares are a shared pool: they
   * get no superblock until a nested array takes one. */
  bool pool = cfg == top && top->ngroups > 0;
  struct creation c = { .cfg = cfg, .top = top, .opts = opts, .err = err,
    .errlen = errlen, .n = cfg->nmembers + (pool ? 0 : cfg->nspares),
    .undo = undo };
  struct member_set gone;
  struct raid_geometry g;
  uint64_t data_offset, chunk = 0;
  unsigned i;
  int r = -1;

  c.members = calloc (c.n, sizeof *c.members);
  c.children = calloc (c.n, sizeof *c.children);
  if (!c.members || !c.children) {
    free (c.members);
    free (c.children);
    return refuse (&c, "%s", strerror (ENOMEM));
  }
  /* The server resyncs in the background what is not clean. */
  if (check_missing (&c, &gone) || (pool && clear_shared_spares (&c, false))
      || open_all (&c) || plan_geometry (&c, &g, &data_offset)
      || check_journal_size (&c, &g, data_offset)
      || (cfg->bitmap && !(chunk = bitmap_chunk (&c, &g, data_offset)))
      || plan_controllers (&c, &g)
      || write_superblocks (&c, &g, data_offset, chunk,
                            opts->assume_clean || c.rebuild >= 0
                                || !has_redundancy (&g, &gone))
      || (pool && clear_shared_spares (&c, true)))
    goto out;
  r = 0;
 out:
  /* What this array wrote on its nested arrays goes back through them;
   * once they are closed (and have marked themselves clean), what they
   * wrote on their own members goes back. */
  if (r == -1 && cfg == top)
    put_back (undo, true, err, errlen);
  for (i = 0; i < c.n; i++) {
    if (c.members[i])
      undo_forget_member (undo, c.members[i]);
    member_close (c.members[i]);
  }
  if (c.journal)
    undo_forget_member (undo, c.journal);
  member_close (c.journal);
  for (i = 0; i < c.nchildren; i++)
    raid_close (c.children[i]);
  if (r == -1 && cfg == top)
    put_back (undo, false, err, errlen);
  free (c.members);
  free (c.children);
  return r;
}
