/* nbdraid: assembling an array from its members' superblocks.
 *
 * The config lists the members in role order.  The freshest superblock
 * of the array (highest events) is the reference: a member it records
 * as faulty, or whose own events lag it, holds stale data and is not
 * used.  A member that is absent or blank is missing.  The array starts
 * when the level tolerates what is not there; members the superblocks
 * still expect need degraded=true (mdadm --run).
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
#include "controllers.h"
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

/* Open a member and read its superblock.  A member that cannot be
 * opened or holds no valid superblock is left missing, with the
 * reason. */
static int
open_slot (struct raid_slot *slot, const struct raid_member_spec *spec,
           const struct raid_config *cfg, const struct raid_options *opts)
{
  struct member_open_options mo;
  char err[256];
  bool none;

  raid_config_member_options (cfg, opts->readonly, &mo);
  slot->state = SLOT_MISSING;
  slot->path = strdup (spec->path);
  if (spec->controller)
    slot->controller = strdup (spec->controller);
  if (!slot->path || (spec->controller && !slot->controller))
    return -1;
  slot->io = member_open (spec->path, &mo, err, sizeof err);
  if (!slot->io) {
    /* err names the path already; keep what follows it */
    snprintf (slot->why, sizeof slot->why, "%s",
              strncmp (err, spec->path, strlen (spec->path)) == 0
              ? err + strlen (spec->path) + 2 : err);
    return 0;
  }
  if (md_sb_read (slot->io, &slot->sb, &none, err, sizeof err) == -1) {
    snprintf (slot->why, sizeof slot->why, "%s",
              none ? "no md superblock" : err + strlen (spec->path) + 2);
    member_close (slot->io);
    slot->io = NULL;
    return 0;
  }
  slot->data_offset_bytes = slot->sb.data_offset_sectors * 512;
  slot->state = SLOT_ACTIVE;    /* for now: judged against the others */
  return 0;
}

static bool
has_superblock (const struct raid_slot *s)
{
  return s->io != NULL;
}

/* The slot whose superblock speaks for the array: among the members of
 * the array most of them belong to, the one with the highest events. */
static int
pick_reference (const struct raid_array *a)
{
  unsigned i, j, votes, best_votes = 0;
  int ref = -1;

  for (i = 0; i < a->geo.members; i++) {
    if (!has_superblock (&a->slots[i]))
      continue;
    for (votes = 0, j = 0; j < a->geo.members; j++)
      votes += has_superblock (&a->slots[j]) &&
        memcmp (a->slots[i].sb.set_uuid, a->slots[j].sb.set_uuid, 16) == 0;
    if (votes > best_votes ||
        (votes == best_votes && ref >= 0 &&
         a->slots[i].sb.events > a->slots[ref].sb.events)) {
      best_votes = votes;
      ref = (int) i;
    }
  }
  return ref;
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

/* Same array and the role the config gives it, or refuse: a wrong disk
 * in the config is an admin's mistake, not a failure to run through.
 * Then judge freshness against the reference. */
static int
judge_member (struct raid_array *a, const struct raid_config *cfg,
              unsigned i, const struct md_superblock *ref, char *err,
              size_t errlen)
{
  struct raid_slot *s = &a->slots[i];
  const char *path = cfg->members[i].path;
  uint16_t role = md_sb_role (&s->sb);
  char want[36], got[36];

  if (memcmp (s->sb.set_uuid, ref->set_uuid, 16) != 0) {
    md_uuid_format (ref->set_uuid, want);
    md_uuid_format (s->sb.set_uuid, got);
    return refuse (err, errlen, "%s belongs to array %s (%s), not to "
                   "array %s (%s) like the other members", path, got,
                   s->sb.set_name, want, ref->set_name);
  }
  if (role == MD_ROLE_SPARE)
    return refuse (err, errlen, "%s: its superblock says it is a spare, "
                   "but %s:%d lists it as member %u", path, cfg->file,
                   cfg->members[i].line, i);
  if (role != i && role < MD_ROLE_MAX)
    return refuse (err, errlen, "%s has role %u in its superblock but "
                   "%s:%d lists it as member %u (members are listed in "
                   "role order)", path, role, cfg->file,
                   cfg->members[i].line, i);
  if (ref->dev_roles[s->sb.dev_number] == MD_ROLE_FAULTY ||
      role == MD_ROLE_FAULTY) {
    s->state = SLOT_FAULTY;
    snprintf (s->why, sizeof s->why, "recorded as faulty in the "
              "superblocks (events %" PRIu64 ")", ref->events);
  }
  else if (s->sb.events < ref->events) {
    s->state = SLOT_MISSING;
    snprintf (s->why, sizeof s->why, "stale: events %" PRIu64 ", the "
              "array is at %" PRIu64 "; needs recovery", s->sb.events,
              ref->events);
  }
  return 0;
}

/* A member we cannot read takes the reference's view of the array,
 * under the device number the reference gives its role, so its failure
 * can be recorded.  If no device holds the role any more, its failure
 * is on record already (max_dev 0: nothing more to record). */
static void
adopt_reference (struct raid_slot *s, const struct md_superblock *ref,
                 unsigned role)
{
  char why[sizeof s->why];
  uint32_t dev;

  s->sb = *ref;
  for (dev = 0; dev < ref->max_dev; dev++)
    if (ref->dev_roles[dev] == role)
      break;
  s->sb.dev_number = dev;
  if (dev < ref->max_dev)
    return;
  s->sb.max_dev = 0;
  s->state = SLOT_FAULTY;
  snprintf (why, sizeof why, "%s", s->why);
  snprintf (s->why, sizeof s->why, "recorded as failed in the superblocks; "
            "now: %.200s", why);
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

/* Every active member must hold its data area; RAID0 members must be
 * equal because md stripes unequal ones in zones, which we do not
 * serve. */
static int
check_data_areas (const struct raid_array *a, char *err, size_t errlen)
{
  const struct raid_geometry *g = &a->geo;
  unsigned i;

  for (i = 0; i < g->members; i++) {
    const struct raid_slot *s = &a->slots[i];
    uint64_t data_bytes = s->sb.data_size_sectors * 512;

    if (s->state != SLOT_ACTIVE)
      continue;
    if (data_bytes < g->member_bytes ||
        s->data_offset_bytes + g->member_bytes > s->io->size_bytes)
      return refuse (err, errlen, "%s: too small for the array: data "
                     "area of %" PRIu64 " bytes at %" PRIu64 " on a %"
                     PRIu64 "-byte member, the array uses %" PRIu64,
                     s->path, data_bytes, s->data_offset_bytes,
                     s->io->size_bytes, g->member_bytes);
    if (g->level == 0 &&
        data_bytes / g->chunk_bytes * g->chunk_bytes != g->member_bytes)
      return refuse (err, errlen, "%s: RAID0 members of unequal data size "
                     "(md's multi-zone RAID0) are not supported", s->path);
  }
  return 0;
}

/* "path (why); path (why)" for the members not active, or only for
 * those the superblocks do not already record as faulty. */
static void
list_members (const struct raid_array *a, bool only_unexpected, char *buf,
              size_t len)
{
  size_t used = 0;
  unsigned i;

  buf[0] = '\0';
  for (i = 0; i < a->geo.members && used < len; i++) {
    const struct raid_slot *s = &a->slots[i];
    if (s->state == SLOT_ACTIVE ||
        (only_unexpected && s->state == SLOT_FAULTY))
      continue;
    used += (size_t) snprintf (buf + used, len - used, "%s%s (%s)",
                               used ? "; " : "", s->path, s->why);
  }
}

/* Can the array run with what is there, and may it? */
static int
check_startable (struct raid_array *a, const struct raid_options *opts,
                 char *err, size_t errlen)
{
  struct member_set gone;
  char list[1024];
  unsigned i, unexpected = 0;

  array_unavailable (a, &gone);
  if (!array_alive_without (a, &gone)) {
    list_members (a, false, list, sizeof list);
    return refuse (err, errlen, "array %s cannot start: %u of %u members "
                   "unavailable, more than RAID%d can lose: %s", a->name,
                   member_set_count (&gone), a->geo.members, a->geo.level,
                   list);
  }
  for (i = 0; i < a->geo.members; i++)
    unexpected += a->slots[i].state == SLOT_MISSING;
  if (unexpected && !opts->degraded) {
    list_members (a, true, list, sizeof list);
    return refuse (err, errlen, "array %s: %u member%s missing: %s; to "
                   "start it degraded anyway, pass degraded=true (like "
                   "mdadm --run)", a->name, unexpected,
                   unexpected == 1 ? " is" : "s are", list);
  }
  return 0;
}

static int
open_spares (struct raid_array *a, const struct raid_config *cfg,
             const struct raid_options *opts, const struct md_superblock *ref,
             char *err, size_t errlen)
{
  unsigned i;

  a->spares = calloc (cfg->nspares ? cfg->nspares : 1, sizeof *a->spares);
  if (!a->spares)
    return refuse (err, errlen, "%s", strerror (ENOMEM));
  for (i = 0; i < cfg->nspares; i++) {
    struct raid_slot *s = &a->spares[i];

    a->nspares++;
    if (open_slot (s, &cfg->spares[i], cfg, opts) == -1)
      return refuse (err, errlen, "%s", strerror (ENOMEM));
    if (!has_superblock (s)) {
      array_log (a, RAID_LOG_ERROR, "array %s: spare %s is not usable: %s",
                 a->name, s->path, s->why);
      continue;
    }
    if (memcmp (s->sb.set_uuid, ref->set_uuid, 16) != 0 ||
        md_sb_role (&s->sb) != MD_ROLE_SPARE)
      return refuse (err, errlen, "%s: not a spare of this array (its "
                     "superblock belongs to '%s', role 0x%x)",
                     cfg->spares[i].path, s->sb.set_name,
                     md_sb_role (&s->sb));
  }
  return 0;
}

/* Engine resources: parity tables, the zero source, the pool. */
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

static void
warn_controllers (struct raid_array *a, const struct raid_config *cfg)
{
  char why[512];

  if (controllers_survive (&a->geo, cfg, NULL, why, sizeof why) == 0)
    array_log (a, RAID_LOG_ERROR, "array %s: warning: %s", a->name, why);
}

/* Members the superblocks still count on but that are not there are
 * written off now, so a stale copy can never come back unnoticed. */
static void
record_missing (struct raid_array *a)
{
  char list[1024];
  unsigned i;

  list_members (a, false, list, sizeof list);
  if (!list[0])
    return;
  array_log (a, RAID_LOG_ERROR, "array %s: running degraded without %s",
             a->name, list);
  for (i = 0; i < a->geo.members; i++)
    if (a->slots[i].state != SLOT_ACTIVE)
      array_record_faulty (a, i);
  if (!a->readonly)
    array_write_superblocks (a);
}

struct raid_array *
raid_assemble (const struct raid_config *cfg, const struct raid_options *opts,
               char *err, size_t errlen)
{
  struct raid_array *a = calloc (1, sizeof *a);
  const struct md_superblock *ref;
  unsigned i;
  int r;

  if (!a || !(a->slots = calloc (cfg->nmembers, sizeof *a->slots))) {
    free (a);
    snprintf (err, errlen, "%s", strerror (ENOMEM));
    return NULL;
  }
  stripe_locks_init (&a->locks);
  pthread_mutex_init (&a->sb_lock, NULL);
  a->geo.members = cfg->nmembers;
  a->readonly = opts->readonly;
  a->direct = cfg->direct;
  a->log = opts->log;
  a->log_opaque = opts->log_opaque;
  snprintf (a->name, sizeof a->name, "%s", cfg->name);
  for (i = 0; i < cfg->nmembers; i++)
    if (open_slot (&a->slots[i], &cfg->members[i], cfg, opts)) {
      refuse (err, errlen, "%s", strerror (ENOMEM));
      goto fail;
    }
  if (check_distinct (a, cfg, err, errlen))
    goto fail;
  r = pick_reference (a);
  if (r < 0) {
    char list[1024];
    list_members (a, false, list, sizeof list);
    refuse (err, errlen, "array %s: no member holds a readable md "
            "superblock: %s; a new array needs 'nbdraid create CONFIG' "
            "first", a->name, list);
    goto fail;
  }
  ref = &a->slots[r].sb;
  for (i = 0; i < cfg->nmembers; i++) {
    if (!has_superblock (&a->slots[i]))
      adopt_reference (&a->slots[i], ref, i);
    else if (judge_member (a, cfg, i, ref, err, errlen))
      goto fail;
  }
  if (check_geometry (ref, cfg, err, errlen))
    goto fail;

  snprintf (a->name, sizeof a->name, "%s", ref->set_name);
  a->geo.level = ref->level;
  a->geo.layout = ref->layout;
  a->geo.chunk_bytes = (uint64_t) ref->chunk_sectors * 512;
  a->geo.member_bytes = ref->size_sectors * 512;
  if (geometry_init (&a->geo, err, errlen) == -1 ||
      check_data_areas (a, err, errlen) ||
      check_startable (a, opts, err, errlen) ||
      open_spares (a, cfg, opts, ref, err, errlen) ||
      init_runtime (a, err, errlen))
    goto fail;
  a->ops = a->geo.parity_members ? &parity_level_ops : &copies_level_ops;
  a->reference = (unsigned) r;
  warn_controllers (a, cfg);
  record_missing (a);
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
  pthread_mutex_destroy (&a->sb_lock);
  parity_free (&a->code);
  for (i = 0; i < a->geo.members; i++) {
    member_close (a->slots[i].io);
    free (a->slots[i].path);
    free (a->slots[i].controller);
  }
  for (i = 0; i < a->nspares; i++) {
    member_close (a->spares[i].io);
    free (a->spares[i].path);
    free (a->spares[i].controller);
  }
  free (a->slots);
  free (a->spares);
  free (a);
}
