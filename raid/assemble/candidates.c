/* nbdraid: the devices a config lists, opened and their superblocks
 * read, before assembly places them: members, spares, and the nested
 * arrays "array:NAME" members name.  Which superblock speaks for the
 * array (candidates_reference) and a device listed twice are decided
 * here too.
 */
#include <config.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "candidates.h"
#include "superblock-io.h"

/* The member layer's open_nested: assemble the nested array an
 * "array:NAME" member names, as a child of the parent, and wrap it. */
static struct member *
open_nested (void *ctx, const char *spec, const char *name, char *err,
             size_t errlen)
{
  struct nest *n = ctx;
  const struct raid_config *g = raid_config_find_group (n->top, name);
  struct raid_array *child;

  if (!g) {
    snprintf (err, errlen, "%s: no such nested array", spec);
    return NULL;
  }
  child = array_assemble (g, n->top, n->opts, err, errlen);
  if (!child)
    return NULL;
  n->parent->children[n->parent->nchildren++] = child;
  return member_array_open (child, spec, err, errlen);
}

/* The device flags a config line may give. */
#define DEVFLAGS (RAID_DEVFLAG_WRITE_MOSTLY | RAID_DEVFLAG_FAILFAST)

/* Open a device and read its superblock.  One that cannot be opened or
 * holds no valid superblock is left without io, with the reason. */
static int
candidate_open (struct candidate *c, const struct raid_config *cfg,
                const struct raid_options *opts, struct nest *nest)
{
  struct raid_slot *slot = &c->s;
  struct member_open_options mo;
  size_t plen = strlen (c->spec->path);
  char err[512];
  bool none;

  member_options_from_config (cfg, opts->readonly, &mo);
  mo.failfast = c->spec->devflags & RAID_DEVFLAG_FAILFAST;
  mo.open_nested = open_nested;
  mo.nested_ctx = nest;
  slot->state = SLOT_MISSING;
  slot->path = strdup (c->spec->path);
  if (c->spec->controller)
    slot->controller = strdup (c->spec->controller);
  if (!slot->path || (c->spec->controller && !slot->controller))
    return -1;
  if (c->spec->missing) {
    snprintf (slot->why, sizeof slot->why,
              "removed: the config's line "
              "for the role says missing");
    return 0;
  }
  slot->io = member_open (c->spec->path, &mo, err, sizeof err);
  if (!slot->io) {
    /* err names the path already; keep what follows it */
    snprintf (slot->why, sizeof slot->why, "%.250s",
              strncmp (err, c->spec->path, plen) == 0 ? err + plen + 2 : err);
    return 0;
  }
  if (md_sb_read (slot->io, &slot->sb, &none, err, sizeof err) == -1) {
    snprintf (slot->why, sizeof slot->why, "%s",
              none ? "no md superblock" : err + plen + 2);
    member_close (slot->io);
    slot->io = NULL;
    return 0;
  }
  slot->data_offset_bytes = slot->sb.data_offset_sectors * 512;
  slot->state = SLOT_ACTIVE; /* for now: judged against the others */
  /* The config's flags are the admin's word: the superblocks take
   * them at the next write (flags_changed). */
  if ((slot->sb.devflags & DEVFLAGS) != c->spec->devflags) {
    slot->sb.devflags = (slot->sb.devflags & ~DEVFLAGS) | c->spec->devflags;
    c->flags_changed = true;
  }
  return 0;
}

struct opening {
  struct candidate *c;
  const struct raid_config *cfg;
  const struct raid_options *opts;
  pthread_t thread;
  bool threaded;
  int r;
};

static void *
open_in_thread (void *arg)
{
  struct opening *o = arg;

  o->r = candidate_open (o->c, o->cfg, o->opts, NULL);
  return NULL;
}

/* Each device opens in a thread of its own: an NBD member's handshakes
 * take round trips, and one that does not answer takes its whole
 * connect timeout (two such members held a start up 6.1 s at a 3 s
 * timeout, one after the other; 3.1 s at once).  Nested arrays open in
 * this thread, one after another, as each adds itself to the parent's
 * children. */
int
candidates_open (struct candidate *c, unsigned n,
                 const struct raid_config *cfg,
                 const struct raid_options *opts, struct nest *nest)
{
  struct opening *o = calloc (n, sizeof *o);
  unsigned i;
  int r = 0;

  if (!o)
    return -1;
  for (i = 0; i < n; i++) {
    o[i] = (struct opening) { .c = &c[i], .cfg = cfg, .opts = opts };
    if (!raid_spec_array (c[i].spec->path))
      o[i].threaded =
        pthread_create (&o[i].thread, NULL, open_in_thread, &o[i]) == 0;
  }
  for (i = 0; i < n; i++)
    if (!o[i].threaded)
      o[i].r = candidate_open (&c[i], cfg, opts, nest);
  for (i = 0; i < n; i++) {
    if (o[i].threaded)
      pthread_join (o[i].thread, NULL);
    r |= o[i].r;
  }
  free (o);
  return r ? -1 : 0;
}

/* Close a slot's device and free its strings, leaving it empty. */
void
slot_free (struct raid_slot *s)
{
  member_close (s->io);
  free (s->path);
  free (s->controller);
  memset (s, 0, sizeof *s);
}

/* The candidate whose superblock speaks for the array: among the
 * devices of the array most of them belong to, the freshest. */
int
candidates_reference (const struct candidate *c, unsigned n)
{
  unsigned i, j, votes, best_votes = 0;
  int ref = -1;

  for (i = 0; i < n; i++) {
    if (!c[i].s.io)
      continue;
    for (votes = 0, j = 0; j < n; j++)
      votes += c[j].s.io
               && memcmp (c[i].s.sb.set_uuid, c[j].s.sb.set_uuid, 16) == 0;
    if (votes > best_votes
        || (votes == best_votes && c[i].s.sb.events > c[ref].s.sb.events)) {
      best_votes = votes;
      ref = (int)i;
    }
  }
  return ref;
}

/* Refuse a config listing one file or device twice, by two names. */
int
candidates_check_distinct (const struct candidate *c, unsigned n, char *err,
                           size_t errlen)
{
  struct member *m[2 * RAID_MAX_MEMBERS];
  unsigned i, x, y;

  for (i = 0; i < n; i++)
    m[i] = c[i].s.io;
  if (member_find_duplicate (m, n, &x, &y))
    return array_refuse (err, errlen, "%s and %s are the same %s",
                         c[x].spec->path, c[y].spec->path,
                         m[x]->identity[0] ? "file" : "device");
  return 0;
}
