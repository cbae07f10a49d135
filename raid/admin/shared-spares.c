/* nbdraid: shared spares of nested arrays.
 *
 * In a config with nested arrays, the top level's "spare =" lines are
 * not spares of the top array (whose members are arrays) but a pool
 * for the nested ones, like mdadm's spare-group: a spare goes to the
 * first nested array that loses a member and has no spare of its own.
 * A pool spare holds no superblock; taking it writes that array's spare
 * superblock on it, so at the next assembly it belongs to that array
 * (array_assemble offers every pool device to every nested array and
 * each keeps the ones that carry its UUID).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "config-file.h"
#include "shared-spares.h"
#include "superblock-io.h"

/* Does a, or an array nested in it, carry this set UUID? */
static bool
owns_uuid (const struct raid_array *a, const uint8_t *uuid)
{
  unsigned i;

  if (memcmp (array_reference (a)->sb.set_uuid, uuid, 16) == 0)
    return true;
  for (i = 0; i < a->nchildren; i++)
    if (owns_uuid (a->children[i], uuid))
      return true;
  return false;
}

/* Does a, or an array nested in it, use path already, by whatever
 * spelling? */
static bool
holds_path (struct raid_array *a, const char *path)
{
  unsigned i;

  for (i = 0; i < a->geo.members + a->nspares; i++) {
    const struct raid_slot *s = array_slot (a, i);
    if (s->path && config_same_path (s->path, path))
      return true;
  }
  for (i = 0; i < a->nchildren; i++)
    if (holds_path (a->children[i], path))
      return true;
  for (i = 0; i < a->nshared; i++)
    if (config_same_path (a->shared[i], path))
      return true;
  return false;
}

/* Check that path is free to be a shared spare: it opens and holds no
 * md superblock.  1: free; 0: a nested array has taken it already;
 * -1: not usable, with the reason in err. */
static int
probe (struct raid_array *root, const char *path, char *err, size_t errlen)
{
  struct member *m = member_open (path, &root->member_opts, err, errlen);
  struct md_superblock *sb = malloc (sizeof *sb);
  char why[256];
  bool none = false;
  int r = -1;

  if (!m || !sb)
    goto out;
  if (md_sb_read (m, sb, &none, why, sizeof why) == 0) {
    if (owns_uuid (root, sb->set_uuid))
      r = 0;
    else
      snprintf (err, errlen, "%s holds the md superblock of array '%s'; "
                "wipe it before sharing it as a spare", path, sb->set_name);
  }
  else if (none)
    r = 1;
  else
    snprintf (err, errlen, "%s", why);
 out:
  member_close (m);
  free (sb);
  return r;
}

int
shared_spares_load (struct raid_array *root, const struct raid_config *cfg)
{
  char err[512];
  unsigned i;

  root->shared = calloc (cfg->nspares + RAID_MAX_MEMBERS,
                         sizeof *root->shared);
  if (!root->shared)
    return -1;
  for (i = 0; i < cfg->nspares; i++) {
    int r = probe (root, cfg->spares[i].path, err, sizeof err);
    if (r == -1)
      array_log (root, RAID_LOG_ERROR, "array %s: shared spare not usable: "
                 "%s", root->name, err);
    else if (r == 1 && !(root->shared[root->nshared++] =
                         strdup (cfg->spares[i].path)))
      return -1;
  }
  return 0;
}

int
raid_admin_add_shared (struct raid_array *root, const char *path, char *err,
                  size_t errlen)
{
  int r;

  if (holds_path (root, path)) {
    snprintf (err, errlen, "%s is already in array %s", path, root->name);
    return -1;
  }
  if (root->nshared == RAID_MAX_MEMBERS) {
    snprintf (err, errlen, "array %s has too many shared spares",
              root->name);
    return -1;
  }
  r = probe (root, path, err, errlen);
  if (r == 0)
    snprintf (err, errlen, "%s is already in a nested array of %s", path,
              root->name);
  if (r != 1 || !(root->shared[root->nshared] = strdup (path)))
    return -1;
  root->nshared++;
  array_log (root, RAID_LOG_INFO, "array %s: added %s as a shared spare",
             root->name, path);
  return 0;
}

/* Does a lack a member it could rebuild onto a spare, with none? */
static bool
wants_spare (const struct raid_array *a)
{
  unsigned i;
  bool empty = false;

  if (a->readonly || a->failed || a->geo.tolerates == 0)
    return false;
  for (i = 0; i < a->geo.members; i++)
    empty |= slot_state (&a->slots[i]) == SLOT_FAULTY ||
      slot_state (&a->slots[i]) == SLOT_MISSING;
  for (i = 0; i < a->nspares && empty; i++)
    if (slot_state (&a->spares[i]) == SLOT_ACTIVE)
      return false;
  return empty;
}

/* Hand pool devices to a and the arrays nested in it, innermost first,
 * while one wants a spare; a device that cannot go leaves the pool. */
static void
give (struct raid_array *root, struct raid_array *a)
{
  char err[512];
  unsigned i;

  for (i = 0; i < a->nchildren; i++)
    give (root, a->children[i]);
  while (root->nshared > 0 && wants_spare (a)) {
    char *path = root->shared[0];
    int r = raid_admin_add (a, path, err, sizeof err);

    memmove (root->shared, root->shared + 1,
             --root->nshared * sizeof *root->shared);
    if (r == 0)
      array_event (a, RAID_EVENT_MOVE_SPARE,
                   (int) (a->geo.members + a->nspares - 1), root->name);
    else
      array_log (root, RAID_LOG_ERROR, "array %s: shared spare %s cannot "
                 "go to array %s: %s", root->name, path, a->name, err);
    free (path);
  }
}

void
shared_spares_give (struct raid_array *root)
{
  unsigned i;

  for (i = 0; i < root->nchildren && root->nshared > 0; i++)
    give (root, root->children[i]);
}

unsigned
raid_shared_spares (struct raid_array *a, const char **out, unsigned max)
{
  unsigned i;

  for (i = 0; i < a->nshared && i < max; i++)
    out[i] = a->shared[i];
  return a->nshared;
}
