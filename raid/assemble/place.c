/* nbdraid: which device holds which role.  The reference superblock's
 * dev_roles place each device: in a role (the fresher of two claimants
 * wins; one too stale needs recovery), as a spare, or as faulty; a
 * role no device fills is missing. */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "place.h"

/* Where the reference puts a device: a role, MD_ROLE_SPARE or
 * MD_ROLE_FAULTY.  A device the reference does not know keeps the role
 * its own superblock claims. */
static uint16_t
reference_role (const struct md_superblock *ref, const struct raid_slot *s)
{
  if (s->sb.dev_number < ref->max_dev)
    return ref->dev_roles[s->sb.dev_number];
  return md_sb_role (&s->sb);
}

/* The roles a shrink under way drops (reshape.h): held by devices the
 * array keeps as its first spares until the reshape ends. */
static unsigned
leaving_roles (const struct md_superblock *ref)
{
  int32_t delta = (int32_t)ref->delta_disks;

  return ref->feature_map & MD_FEATURE_RESHAPE && delta < 0 ? (unsigned)-delta
                                                            : 0;
}

/* Put a candidate in role r; the fresher of two claimants wins. */
static int
claim_role (struct raid_array *a, struct candidate *c, unsigned r,
            const struct md_superblock *ref, struct candidate **holder,
            char *err, size_t errlen)
{
  struct candidate *h = holder[r];

  if (h && h->s.sb.events == c->s.sb.events)
    return array_refuse (err, errlen,
                         "%s and %s both claim role %u of array %s",
                         h->spec->path, c->spec->path, r, a->name);
  if (h && h->s.sb.events > c->s.sb.events)
    return 0; /* c stays outside, as stale */
  if (h)
    h->placed = false;
  holder[r] = c;
  c->placed = true;
  if (c->s.sb.events + 1 < ref->events) {
    c->s.state = SLOT_MISSING;
    snprintf (c->s.why, sizeof c->s.why,
              "stale: events %" PRIu64 ", the "
              "array is at %" PRIu64 "; needs recovery",
              c->s.sb.events, ref->events);
  }
  else if (c->s.sb.feature_map & MD_FEATURE_RECOVERY_OFFSET) {
    c->s.state = SLOT_RECOVERING;
    c->s.front = c->s.sb.recovery_offset_sectors * 512;
  }
  return 0;
}

/* A role no device fills.  It takes the reference's view of the array,
 * under the device number the reference still gives the role, so its
 * loss can be recorded; if no device holds the role any more, the loss
 * is on record already (dev_number = max_dev).  The config's member line
 * of the same position says what happened to it. */
static void
empty_role (struct raid_slot *slot, const struct candidate *line,
            const struct md_superblock *ref, unsigned role)
{
  uint32_t dev;

  slot->state = SLOT_MISSING;
  slot->path = strdup (line->spec->path);
  snprintf (slot->why, sizeof slot->why, "%s",
            !line->placed && !line->s.io ? line->s.why
                                         : "no device holds this role");
  slot->sb = *ref;
  for (dev = 0; dev < ref->max_dev; dev++)
    if (ref->dev_roles[dev] == role)
      break;
  slot->sb.dev_number = dev;
  if (dev == ref->max_dev) {
    slot->state = SLOT_FAULTY;
    snprintf (slot->why, sizeof slot->why,
              "recorded as failed in the "
              "superblocks; now: %.180s",
              !line->placed && !line->s.io ? line->s.why
                                           : "no device holds this role");
  }
}

/* Same array, or refuse: a wrong disk in the config is an admin's
 * mistake, not a failure to run through.  Then give every device its
 * place. */
int
place_devices (struct raid_array *a, const struct raid_config *cfg,
               struct candidate *c, unsigned n, const struct md_superblock *ref,
               char *err, size_t errlen)
{
  struct candidate *holder[RAID_MAX_MEMBERS] = { NULL };
  char want[36], got[36];
  unsigned i;

  for (i = 0; i < n; i++) {
    struct raid_slot *s = &c[i].s;
    uint16_t role;

    if (!s->io)
      continue;
    if (memcmp (s->sb.set_uuid, ref->set_uuid, 16) != 0) {
      md_uuid_format (ref->set_uuid, want);
      md_uuid_format (s->sb.set_uuid, got);
      return array_refuse (err, errlen,
                           "%s belongs to array %s (%s), not to "
                           "array %s (%s) like the other members",
                           c[i].spec->path, got, s->sb.set_name, want,
                           ref->set_name);
    }
    role = reference_role (ref, s);
    if (role < a->geo.members + leaving_roles (ref)) {
      if (claim_role (a, &c[i], role, ref, holder, err, errlen))
        return -1;
    }
    else if (role == MD_ROLE_FAULTY) {
      s->state = SLOT_FAULTY;
      snprintf (s->why, sizeof s->why,
                "recorded as faulty in the "
                "superblocks (events %" PRIu64 ")",
                ref->events);
      /* In its old role, if nothing else claims it, for the picture. */
      role = md_sb_role (&s->sb);
      if (role < a->geo.members && !holder[role]) {
        holder[role] = &c[i];
        c[i].placed = true;
      }
    }
    else if (role != MD_ROLE_SPARE)
      return array_refuse (err, errlen, "%s: role 0x%x is not supported",
                           c[i].spec->path, role);
  }
  for (i = 0; i < a->geo.members; i++) {
    if (holder[i]) {
      a->slots[i] = holder[i]->s;
      holder[i]->s.io = NULL;
      holder[i]->s.path = holder[i]->s.controller = NULL;
      continue;
    }
    if (i < cfg->nmembers)
      empty_role (&a->slots[i], &c[i], ref, i);
    else {
      /* A growing RAID0's RAID4 parity role: no line, never a device. */
      a->slots[i].state = SLOT_FAULTY;
      a->slots[i].sb = *ref;
      a->slots[i].sb.dev_number = ref->max_dev;
      snprintf (a->slots[i].why, sizeof a->slots[i].why,
                "the parity role of the RAID4 a RAID0 grows as");
    }
  }
  return 0;
}

/* The role a device that may hold one a shrink drops holds: the one
 * the reference gives it (placed, the fresher of two claimants), or,
 * if it failed, the one it had (it shows there, faulty). */
static uint16_t
leaving_role (const struct md_superblock *ref, const struct candidate *c)
{
  uint16_t role = reference_role (ref, &c->s);

  if (role == MD_ROLE_FAULTY)
    return md_sb_role (&c->s.sb);
  return c->placed ? role : MD_ROLE_SPARE;
}

/* The roles a shrink drops, into the first spares in their order; one
 * no device holds is a faulty stub there (the old geometry does
 * without it). */
static void
place_leaving (struct raid_array *a, struct candidate *c, unsigned n,
               const struct md_superblock *ref)
{
  unsigned j, i;

  for (j = 0; j < leaving_roles (ref); j++) {
    struct raid_slot *s = &a->spares[a->nspares++];
    for (i = 0; i < n; i++)
      if (c[i].s.io && leaving_role (ref, &c[i]) == a->geo.members + j)
        break;
    if (i < n) {
      *s = c[i].s;
      c[i].s.io = NULL;
      c[i].s.path = c[i].s.controller = NULL;
      continue;
    }
    s->state = SLOT_FAULTY;
    s->path = strdup (RAID_MEMBER_MISSING);
    s->sb = *ref;
    s->sb.dev_number = ref->max_dev;
    snprintf (s->why, sizeof s->why,
              "no device holds role %u, which the reshape drops",
              a->geo.members + j);
  }
}

/* The devices outside the roles: spares (a shrink's dropped roles
 * first), and stale or faulty ones. */
int
place_the_rest (struct raid_array *a, const struct raid_config *cfg,
                struct candidate *c, unsigned n,
                const struct md_superblock *ref)
{
  unsigned i;

  a->spares = calloc (RAID_MAX_MEMBERS, sizeof *a->spares);
  if (!a->spares)
    return -1;
  place_leaving (a, c, n, ref);
  for (i = 0; i < n; i++) {
    struct raid_slot *s = &c[i].s;
    /* Member lines that could not be read speak for their role (a
     * RAID0 growing through RAID4 has one role more than lines). */
    if (c[i].placed || !s->path || (!s->io && i < cfg->nmembers))
      continue;
    if (a->nspares == RAID_MAX_MEMBERS)
      break;
    if (s->io && s->state == SLOT_ACTIVE
        && reference_role (ref, s) != MD_ROLE_SPARE) {
      s->state = SLOT_MISSING;
      snprintf (s->why, sizeof s->why,
                "stale copy of role %u (events %" PRIu64
                ", the array is at %" PRIu64 ")",
                reference_role (ref, s), s->sb.events, ref->events);
    }
    else if (s->io && s->sb.events < ref->events)
      s->sb.events = ref->events; /* a spare holds no data */
    else if (!s->io)
      array_log (a, RAID_LOG_ERROR, "array %s: %s is not usable: %s", a->name,
                 s->path, s->why);
    a->spares[a->nspares++] = *s;
    s->io = NULL;
    s->path = s->controller = NULL;
  }
  return 0;
}
