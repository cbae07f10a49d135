/* nbdraid scan: the devices' superblocks grouped into arrays, each
 * device placed as assembly would place it, and the arrays stacked on
 * arrays found by looking inside each array that was.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scan.h"

/* The array of the given UUID, made on first mention. */
static struct scan_array *
array_of (struct scan_set *set, const char *uuid)
{
  struct scan_array **grown, *a;
  size_t i;

  for (i = 0; i < set->narrays; i++)
    if (strcmp (set->arrays[i]->ref->uuid, uuid) == 0)
      return set->arrays[i];
  grown = realloc (set->arrays, (set->narrays + 1) * sizeof *grown);
  if (!grown)
    return NULL;
  set->arrays = grown;
  a = calloc (1, sizeof *a);
  if (a)
    set->arrays[set->narrays++] = a;
  return a;
}

/* Keep d, in its array; the array's places are worked out again.
 * Takes d.  0, or -1 out of memory. */
static int
keep (struct scan_set *set, struct scan_device *d)
{
  struct scan_device **grown;
  struct scan_array *a;

  grown = realloc (set->devices, (set->ndevices + 1) * sizeof *grown);
  if (!grown)
    goto fail;
  set->devices = grown;
  a = array_of (set, d->info.uuid);
  if (!a)
    goto fail;
  grown = realloc (a->devices, (a->ndevices + 1) * sizeof *grown);
  if (!grown)
    goto fail;
  a->devices = grown;
  a->devices[a->ndevices++] = d;
  if (!a->ref)
    a->ref = &d->info;          /* for array_of until it is placed */
  a->placed = false;
  set->devices[set->ndevices++] = d;
  return 0;

 fail:
  free (d->path);
  free (d);
  fprintf (stderr, "nbdraid: %s\n", strerror (ENOMEM));
  return -1;
}

int
scan_add_device (struct scan_set *set, const char *spec)
{
  struct scan_device *d = calloc (1, sizeof *d);
  char err[512];
  int r;

  if (!d || !(d->path = strdup (spec))) {
    free (d);
    fprintf (stderr, "nbdraid: %s\n", strerror (ENOMEM));
    return -1;
  }
  r = raid_examine (spec, &d->info, err, sizeof err);
  if (r == 0)
    return keep (set, d);
  /* A device of no array is what a scan meets most; a damaged
   * superblock, or a device that cannot be read, the admin must hear
   * of. */
  if (r == 1 || errno != ENODATA)
    fprintf (stderr, "nbdraid: %s; skipped\n", err);
  free (d->path);
  free (d);
  return 0;
}

bool
scan_is_stale (const struct scan_array *a, const struct scan_device *d)
{
  /* One event behind is current, as assembly (and md) take it. */
  return d->info.events + 1 < a->ref->events;
}

/* The freshest superblock of a's devices (the first of equals), which
 * assembly takes as the array's reference. */
static const struct raid_member_info *
freshest (const struct scan_array *a)
{
  const struct raid_member_info *ref = &a->devices[0]->info;
  size_t i;

  for (i = 1; i < a->ndevices; i++)
    if (a->devices[i]->info.events > ref->events)
      ref = &a->devices[i]->info;
  return ref;
}

/* Where d goes by a's reference; SCAN_MEMBER for now if it claims a
 * role, which its rival claimants may yet take. */
static enum scan_place
claim (const struct scan_array *a, struct scan_device *d)
{
  const char *special, *own = d->info.role_name;

  d->role = raid_member_role (a->ref, &d->info, &special);
  if (special && strcmp (special, "spare") == 0)
    /* A device that was no spare itself, and lags: it was removed and
     * md gave its device number to a spare added since.  A failed disk
     * is no spare. */
    return (!own || strcmp (own, "spare") != 0) && scan_is_stale (a, d)
      ? SCAN_STALE : SCAN_SPARE;
  if (special)
    return SCAN_FAULTY;
  if (d->role >= a->ref->raid_disks)
    return SCAN_STALE;          /* its own old superblock's role */
  return SCAN_MEMBER;
}

/* Place a's devices by its freshest superblock, as assembly does: in
 * their roles (the freshest of two claimants), as spares, or left out
 * as stale, duplicate or faulty. */
static int
place (struct scan_array *a)
{
  const char *colon;
  size_t i;

  a->ref = freshest (a);
  colon = strchr (a->ref->name, ':');   /* mdadm's homehost:name */
  snprintf (a->name, sizeof a->name, "%s",
            colon && colon[1] ? colon + 1 : a->ref->name);
  free (a->members);
  a->members = calloc (a->ref->raid_disks, sizeof *a->members);
  if (!a->members) {
    fprintf (stderr, "nbdraid: %s\n", strerror (ENOMEM));
    return -1;
  }
  for (i = 0; i < a->ndevices; i++) {
    struct scan_device *d = a->devices[i], **holder;

    d->place = claim (a, d);
    if (d->place != SCAN_MEMBER)
      continue;
    holder = &a->members[d->role];
    if (!*holder || d->info.events > (*holder)->info.events)
      *holder = d;
  }
  for (i = 0; i < a->ndevices; i++) {
    struct scan_device *d = a->devices[i], *holder;

    if (d->place == SCAN_MEMBER) {
      holder = a->members[d->role];
      d->place = holder == d ? SCAN_MEMBER
        : holder->info.events == d->info.events ? SCAN_DUPLICATE
        : SCAN_STALE;
    }
    if (d->inner)
      d->inner->outer = d->place == SCAN_MEMBER ? a : NULL;
  }
  a->placed = true;
  return 0;
}

/* Is o a, or an array inside a (through its devices, at most depth
 * arrays down)? */
static bool
within (const struct scan_array *a, const struct scan_array *o,
        size_t depth)
{
  size_t i;

  if (a == o)
    return true;
  for (i = 0; depth > 0 && i < a->ndevices; i++)
    if (a->devices[i]->inner && within (a->devices[i]->inner, o, depth - 1))
      return true;
  return false;
}

/* The array a as a config in a temporary file, read back: what the
 * engine assembles.  0, or -1 with err. */
static int
load_config (struct scan_array *a, struct raid_config *cfg, char *err,
             size_t errlen)
{
  const char *tmp = getenv ("TMPDIR");
  char *file;
  FILE *fp;
  int fd, r = -1;

  if (asprintf (&file, "%s/nbdraid-scan.XXXXXX", tmp && *tmp ? tmp : "/tmp")
      == -1) {
    snprintf (err, errlen, "%s", strerror (ENOMEM));
    return -1;
  }
  fd = mkstemp (file);
  if (fd == -1) {
    snprintf (err, errlen, "%s: %s", file, strerror (errno));
    free (file);
    return -1;
  }
  fp = fdopen (fd, "w");
  if (!fp) {
    snprintf (err, errlen, "%s: %s", file, strerror (errno));
    close (fd);
  }
  else {
    scan_print_config (fp, a);
    if (fclose (fp) == EOF)
      snprintf (err, errlen, "%s: write: %s", file, strerror (errno));
    else
      r = raid_config_load (file, cfg, err, errlen);
  }
  unlink (file);
  free (file);
  return r;
}

/* Look inside array a for the superblock of an array it is a member
 * of; keep a as that array's device if there is one.  0, or -1 out of
 * memory. */
static int
look_inside (struct scan_set *set, struct scan_array *a)
{
  struct scan_device *d = calloc (1, sizeof *d);
  struct raid_config cfg;
  char err[1024];
  size_t i;
  int r, why;

  if (!d) {
    fprintf (stderr, "nbdraid: %s\n", strerror (ENOMEM));
    return -1;
  }
  r = load_config (a, &cfg, err, sizeof err);
  why = EIO;
  if (r == 0) {
    r = raid_examine_array (&cfg, &d->info, err, sizeof err);
    why = errno;
    raid_config_free (&cfg);
  }
  if (r == 0) {
    for (i = 0; i < set->narrays; i++)
      if (strcmp (set->arrays[i]->ref->uuid, d->info.uuid) == 0 &&
          within (a, set->arrays[i], set->narrays)) {
        fprintf (stderr, "nbdraid: array %s (uuid %s) holds a superblock "
                 "of array %s, which it is part of; ignored\n", a->name,
                 a->ref->uuid, d->info.uuid);
        free (d);
        return 0;
      }
    d->inner = a;
    return keep (set, d);
  }
  /* Most arrays hold no array's superblock; one that does not assemble
   * will not serve either, and the admin should hear why. */
  if (r == 1 || why != ENODATA)
    fprintf (stderr, "nbdraid: array %s (uuid %s): %s\n", a->name,
             a->ref->uuid, err);
  free (d);
  return 0;
}

int
scan_find_arrays (struct scan_set *set)
{
  size_t i, looked = 0, n;

  for (;;) {
    for (i = 0; i < set->narrays; i++)
      if (!set->arrays[i]->placed && place (set->arrays[i]) == -1)
        return -1;
    if (looked == set->narrays)
      return 0;
    /* Arrays found now (stacks) are looked into in the next round,
     * once placed. */
    for (n = set->narrays; looked < n; looked++)
      if (look_inside (set, set->arrays[looked]) == -1)
        return -1;
  }
}

bool
scan_needs_degraded (const struct scan_array *a)
{
  unsigned r;

  for (r = 0; r < a->ref->raid_disks; r++)
    if (a->members[r] ? scan_is_stale (a, a->members[r])
        : a->ref->array_state[r] == 'A')
      return true;
  return false;
}

void
scan_set_free (struct scan_set *set)
{
  size_t i;

  for (i = 0; i < set->ndevices; i++) {
    free (set->devices[i]->path);
    free (set->devices[i]);
  }
  for (i = 0; i < set->narrays; i++) {
    free (set->arrays[i]->devices);
    free (set->arrays[i]->members);
    free (set->arrays[i]);
  }
  free (set->devices);
  free (set->arrays);
}
