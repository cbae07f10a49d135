/* nbdraid: assembling an array from its members' superblocks.
 *
 * The config lists the members in role order; their superblocks must
 * agree with it and with each other before anything is served.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "array.h"
#include "superblock-io.h"

/* Threads in the member I/O pool: enough for every member to have a
 * couple of requests in flight. */
static unsigned
pool_threads (unsigned members)
{
  unsigned n = 2 * members;
  return n < 4 ? 4 : n > 64 ? 64 : n;
}

static int
refuse (char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (err, errlen, fmt, ap);
  va_end (ap);
  return -1;
}

static int
open_slot (struct raid_slot *slot, const struct raid_member_spec *spec,
           const struct raid_options *opts, bool direct, char *err,
           size_t errlen)
{
  struct member_open_options mo = { .readonly = opts->readonly,
    .direct = direct };
  bool none;

  slot->io = member_open (spec->path, &mo, err, errlen);
  if (!slot->io)
    return -1;
  if (md_sb_read (slot->io, &slot->sb, &none, err, errlen) == -1) {
    if (none)
      snprintf (err, errlen, "%s: no md superblock: create the array "
                "first with 'nbdraid create CONFIG'", spec->path);
    return -1;
  }
  if (spec->controller && !(slot->controller = strdup (spec->controller)))
    return refuse (err, errlen, "%s", strerror (ENOMEM));
  slot->data_offset_bytes = slot->sb.data_offset_sectors * 512;
  return 0;
}

static int
check_distinct (const struct raid_array *a, const struct raid_config *cfg,
                char *err, size_t errlen)
{
  struct member *m[RAID_MAX_MEMBERS];
  unsigned i, x, y;

  for (i = 0; i < cfg->nmembers; i++)
    m[i] = a->slots[i].io;
  if (member_find_duplicate (m, cfg->nmembers, &x, &y))
    return refuse (err, errlen, "%s and %s are the same %s",
                   cfg->members[x].path, cfg->members[y].path,
                   m[x]->identity[0] ? "file" : "device");
  return 0;
}

/* Same array, role as listed, same events. */
static int
check_membership (const struct raid_array *a, const struct raid_config *cfg,
                  char *err, size_t errlen)
{
  const struct md_superblock *ref = &a->slots[0].sb;
  char want[36], got[36];
  unsigned i;

  md_uuid_format (ref->set_uuid, want);
  for (i = 0; i < cfg->nmembers; i++) {
    const struct md_superblock *sb = &a->slots[i].sb;
    const char *path = cfg->members[i].path;
    uint16_t role = md_sb_role (sb);

    md_uuid_format (sb->set_uuid, got);
    if (memcmp (sb->set_uuid, ref->set_uuid, 16) != 0)
      return refuse (err, errlen, "%s belongs to array %s (%s), not to "
                     "array %s (%s) like %s", path, got, sb->set_name,
                     want, ref->set_name, cfg->members[0].path);
    if (role == MD_ROLE_SPARE)
      return refuse (err, errlen, "%s: its superblock says it is a spare, "
                     "but %s:%d lists it as member %u", path, cfg->file,
                     cfg->members[i].line, i);
    if (role == MD_ROLE_FAULTY)
      return refuse (err, errlen, "%s: its superblock says it is faulty; "
                     "degraded assembly is not supported yet", path);
    if (role != i)
      return refuse (err, errlen, "%s has role %u in its superblock but "
                     "%s:%d lists it as member %u (members are listed in "
                     "role order)", path, role, cfg->file,
                     cfg->members[i].line, i);
    if (sb->events != ref->events)
      return refuse (err, errlen, "%s is stale (events %" PRIu64 ", %s has "
                     "%" PRIu64 "); degraded assembly is not supported yet",
                     sb->events < ref->events ? path : cfg->members[0].path,
                     sb->events < ref->events ? sb->events : ref->events,
                     sb->events < ref->events ? cfg->members[0].path : path,
                     sb->events < ref->events ? ref->events : sb->events);
  }
  return 0;
}

/* The config and the superblocks must describe the same geometry. */
static int
check_geometry (const struct md_superblock *sb, const struct raid_config *cfg,
                char *err, size_t errlen)
{
  char c[32], s[32];

  if (sb->level != cfg->level)
    return refuse (err, errlen, "%s:%d: level is %d but the superblocks "
                   "say RAID%d", cfg->file, cfg->level_line, cfg->level,
                   sb->level);
  if (sb->raid_disks != cfg->nmembers)
    return refuse (err, errlen, "%s: lists %u members but the superblocks "
                   "say the array has %u", cfg->file, cfg->nmembers,
                   sb->raid_disks);
  if (sb->level != 0 && sb->level != 1 && sb->layout != cfg->layout)
    return refuse (err, errlen, "%s:%d: layout is %s but the superblocks "
                   "say %s", cfg->file, cfg->layout_line,
                   geometry_layout_name (cfg->level, cfg->layout, c,
                                         sizeof c),
                   geometry_layout_name (sb->level, sb->layout, s,
                                         sizeof s));
  if (sb->level != 1 && (uint64_t) sb->chunk_sectors * 512 != cfg->chunk_bytes)
    return refuse (err, errlen, "%s:%d: chunk is %" PRIu64 "K but the "
                   "superblocks say %uK", cfg->file, cfg->chunk_line,
                   cfg->chunk_bytes / 1024, sb->chunk_sectors / 2);
  return 0;
}

/* Every member must hold its data area; RAID0 members must be equal
 * because md stripes unequal ones in zones, which we do not serve. */
static int
check_data_areas (const struct raid_array *a, const struct raid_config *cfg,
                  char *err, size_t errlen)
{
  const struct raid_geometry *g = &a->geo;
  unsigned i;

  for (i = 0; i < g->members; i++) {
    const struct raid_slot *s = &a->slots[i];
    uint64_t data_bytes = s->sb.data_size_sectors * 512;

    if (data_bytes < g->member_bytes ||
        s->data_offset_bytes + g->member_bytes > s->io->size_bytes)
      return refuse (err, errlen, "%s: too small for the array: data "
                     "area of %" PRIu64 " bytes at %" PRIu64 " on a %"
                     PRIu64 "-byte member, the array uses %" PRIu64,
                     cfg->members[i].path, data_bytes, s->data_offset_bytes,
                     s->io->size_bytes, g->member_bytes);
    if (g->level == 0 &&
        data_bytes / g->chunk_bytes * g->chunk_bytes != g->member_bytes)
      return refuse (err, errlen, "%s: RAID0 members of unequal data size "
                     "(md's multi-zone RAID0) are not supported",
                     cfg->members[i].path);
  }
  return 0;
}

static int
open_spares (struct raid_array *a, const struct raid_config *cfg,
             const struct raid_options *opts, char *err, size_t errlen)
{
  const struct md_superblock *ref = &a->slots[0].sb;
  unsigned i;

  a->spares = calloc (cfg->nspares ? cfg->nspares : 1, sizeof *a->spares);
  if (!a->spares)
    return refuse (err, errlen, "%s", strerror (ENOMEM));
  for (i = 0; i < cfg->nspares; i++) {
    struct raid_slot *s = &a->spares[i];

    a->nspares++;
    if (open_slot (s, &cfg->spares[i], opts, cfg->direct, err, errlen))
      return -1;
    if (memcmp (s->sb.set_uuid, ref->set_uuid, 16) != 0 ||
        md_sb_role (&s->sb) != MD_ROLE_SPARE)
      return refuse (err, errlen, "%s: not a spare of this array (its "
                     "superblock belongs to '%s', role 0x%x)",
                     cfg->spares[i].path, s->sb.set_name,
                     md_sb_role (&s->sb));
  }
  return 0;
}

/* Engine resources: locks, parity tables, the zero source, the pool. */
static int
init_runtime (struct raid_array *a, char *err, size_t errlen)
{
  const struct raid_geometry *g = &a->geo;
  void *zeros;

  if (g->parity_members &&
      parity_init (&a->code, g->data_members, g->parity_members) == -1)
    return refuse (err, errlen, "%s", strerror (errno));
  /* A private anonymous read-only mapping: zeros that cost no memory. */
  zeros = mmap (NULL, g->unit_bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
                -1, 0);
  if (zeros == MAP_FAILED)
    return refuse (err, errlen, "mmap: %s", strerror (errno));
  a->zeros = zeros;
  a->pool = iopool_new (pool_threads (g->members));
  if (!a->pool)
    return refuse (err, errlen, "%s", strerror (ENOMEM));
  return 0;
}

struct raid_array *
raid_assemble (const struct raid_config *cfg, const struct raid_options *opts,
               char *err, size_t errlen)
{
  struct raid_array *a = calloc (1, sizeof *a);
  const struct md_superblock *sb;
  unsigned i;

  if (!a || !(a->slots = calloc (cfg->nmembers, sizeof *a->slots))) {
    free (a);
    snprintf (err, errlen, "%s", strerror (ENOMEM));
    return NULL;
  }
  stripe_locks_init (&a->locks);
  a->geo.members = cfg->nmembers;
  a->readonly = opts->readonly;
  a->direct = cfg->direct;
  a->log = opts->log;
  a->log_opaque = opts->log_opaque;
  for (i = 0; i < cfg->nmembers; i++)
    if (open_slot (&a->slots[i], &cfg->members[i], opts, cfg->direct, err,
                   errlen))
      goto fail;
  if (check_distinct (a, cfg, err, errlen))
    goto fail;
  sb = &a->slots[0].sb;
  if (check_membership (a, cfg, err, errlen) ||
      check_geometry (sb, cfg, err, errlen))
    goto fail;

  a->geo.level = sb->level;
  a->geo.layout = sb->layout;
  a->geo.chunk_bytes = (uint64_t) sb->chunk_sectors * 512;
  a->geo.member_bytes = sb->size_sectors * 512;
  if (geometry_init (&a->geo, err, errlen) == -1 ||
      check_data_areas (a, cfg, err, errlen) ||
      open_spares (a, cfg, opts, err, errlen) ||
      init_runtime (a, err, errlen))
    goto fail;
  a->ops = a->geo.parity_members ? &parity_level_ops : &copies_level_ops;
  snprintf (a->name, sizeof a->name, "%s", sb->set_name);
  return a;

 fail:
  raid_close (a);
  return NULL;
}

void
raid_close (struct raid_array *a)
{
  unsigned i;

  if (!a)
    return;
  iopool_free (a->pool);
  if (a->zeros)
    munmap ((void *) a->zeros, a->geo.unit_bytes);
  stripe_locks_destroy (&a->locks);
  parity_free (&a->code);
  for (i = 0; i < a->geo.members; i++) {
    member_close (a->slots[i].io);
    free (a->slots[i].controller);
  }
  for (i = 0; i < a->nspares; i++) {
    member_close (a->spares[i].io);
    free (a->spares[i].controller);
  }
  free (a->slots);
  free (a->spares);
  free (a);
}
