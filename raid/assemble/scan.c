/* nbdraid: find an array's devices by their superblocks (scan = GLOB),
 * as mdadm --assemble --scan finds them wherever they are: a disk moved
 * to another controller port, or a file renamed, changes its path but
 * not its superblock.
 *
 * Before assembly, each member or spare line whose path holds no device
 * of the array is given, in turn, a device the scan found that carries
 * the array's UUID and that no line names.  The array is the one the
 * lines' own devices belong to, or else the one whose superblocks carry
 * the config's name; two arrays of that name found by the scan are an
 * error, as mdadm refuses an ambiguous ARRAY line.  Roles come from the
 * superblocks at assembly, as always, so the order does not matter.
 */
#include <config.h>

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config-file.h"
#include "raid.h"

/* A device the scan found: its path and array UUID. */
struct found {
  char *path;
  char uuid[37];
  bool used;
};

/* The set name as md stores it may be "host:name", as mdadm writes it. */
static bool
names_array (const char *set_name, const char *name)
{
  const char *colon = strchr (set_name, ':');

  return strcmp (set_name, name) == 0 ||
    (colon && strcmp (colon + 1, name) == 0);
}

/* The array UUID of spec's device if it has a readable superblock (of
 * an array called name, unless name is NULL); "" otherwise. */
static void
uuid_of (const char *spec, const char *name, char *uuid)
{
  struct raid_member_info *info = malloc (sizeof *info);
  char why[512];

  uuid[0] = '\0';
  if (info && raid_examine (spec, info, why, sizeof why) == 0 &&
      (!name || names_array (info->name, name)))
    snprintf (uuid, 37, "%s", info->uuid);
  free (info);
}

/* Expand cfg's scan globs into the devices with a superblock named
 * cfg->name: a malloc'd array (*n of them). */
static struct found *
expand (const struct raid_config *cfg, unsigned *n)
{
  struct raid_member_info *info = malloc (sizeof *info);
  struct found *f = NULL, *grown;
  char why[512];
  unsigned i;
  size_t j;

  *n = 0;
  for (i = 0; i < cfg->nscan && info; i++) {
    glob_t g;

    if (glob (cfg->scan[i], 0, NULL, &g) != 0)
      continue;
    for (j = 0; j < g.gl_pathc; j++) {
      struct stat st;
      const char *p = g.gl_pathv[j];
      if (stat (p, &st) == -1 || !(S_ISREG (st.st_mode) ||
                                   S_ISBLK (st.st_mode)) ||
          raid_examine (p, info, why, sizeof why) != 0 ||
          !names_array (info->name, cfg->name))
        continue;
      grown = realloc (f, (*n + 1) * sizeof *f);
      if (!grown || !(grown[*n].path = strdup (p))) {
        f = grown ? grown : f;
        continue;
      }
      f = grown;
      snprintf (f[*n].uuid, sizeof f[*n].uuid, "%s", info->uuid);
      f[(*n)++].used = false;
    }
    globfree (&g);
  }
  free (info);
  return f;
}

/* The UUID of cfg's array: its lines' devices', else the one the scan
 * found under its name.  -1 with the reason in err when the scan found
 * two arrays of that name; 0 with "" when it found none. */
static int
array_uuid (const struct raid_config *cfg, const struct found *f,
            unsigned n, char *uuid, char *err, size_t errlen)
{
  unsigned i;

  uuid[0] = '\0';
  for (i = 0; i < cfg->nmembers + cfg->nspares && !uuid[0]; i++) {
    const struct raid_member_spec *m = i < cfg->nmembers ? &cfg->members[i]
      : &cfg->spares[i - cfg->nmembers];
    if (!m->missing && !raid_spec_array (m->path))
      uuid_of (m->path, cfg->name, uuid);
  }
  if (uuid[0])
    return 0;
  for (i = 0; i < n; i++) {
    if (!uuid[0])
      snprintf (uuid, 37, "%s", f[i].uuid);
    else if (strcmp (uuid, f[i].uuid) != 0) {
      snprintf (err, errlen, "array %s: scan found two arrays of that "
                "name: UUID %s (%s) and UUID %s (%s); name the devices "
                "on member lines", cfg->name, f[0].uuid, f[0].path,
                f[i].uuid, f[i].path);
      return -1;
    }
  }
  return 0;
}

/* Give spec, whose device is not the array's, a device the scan found
 * that no line names. */
static void
fill (const struct raid_config *cfg, struct raid_member_spec *spec,
      struct found *f, unsigned n, const char *uuid, raid_log_fn log,
      void *opaque)
{
  char msg[1200];
  unsigned i, j;

  for (i = 0; i < n; i++) {
    bool named = f[i].used || strcmp (f[i].uuid, uuid) != 0;
    for (j = 0; j < cfg->nmembers + cfg->nspares && !named; j++) {
      const struct raid_member_spec *m = j < cfg->nmembers
        ? &cfg->members[j] : &cfg->spares[j - cfg->nmembers];
      named = !m->missing && config_same_path (m->path, f[i].path);
    }
    if (named)
      continue;
    snprintf (msg, sizeof msg, "array %s: %s (line %d) holds no device of "
              "the array; the scan found %s", cfg->name, spec->path,
              spec->line, f[i].path);
    if (log)
      log (opaque, RAID_LOG_INFO, msg);
    f[i].used = true;
    free (spec->path);
    spec->path = strdup (f[i].path);
    return;
  }
}

/* One array of the file (the top or a nested one). */
static int
scan_one (struct raid_config *cfg, raid_log_fn log, void *opaque,
          char *err, size_t errlen)
{
  struct found *f;
  char uuid[37], theirs[37];
  unsigned n, i;
  int r;

  if (cfg->nscan == 0)
    return 0;
  f = expand (cfg, &n);
  r = array_uuid (cfg, f, n, uuid, err, errlen);
  for (i = 0; r == 0 && uuid[0] && i < cfg->nmembers + cfg->nspares; i++) {
    struct raid_member_spec *m = i < cfg->nmembers ? &cfg->members[i]
      : &cfg->spares[i - cfg->nmembers];
    if (m->missing || raid_spec_array (m->path) || raid_spec_is_uri (m->path))
      continue;
    uuid_of (m->path, NULL, theirs);
    if (strcmp (theirs, uuid) != 0)
      fill (cfg, m, f, n, uuid, log, opaque);
  }
  for (i = 0; i < n; i++)
    free (f[i].path);
  free (f);
  return r;
}

int
raid_config_scan (struct raid_config *cfg, raid_log_fn log, void *opaque,
                  char *err, size_t errlen)
{
  unsigned i;

  if (scan_one (cfg, log, opaque, err, errlen) == -1)
    return -1;
  for (i = 0; i < cfg->ngroups; i++)
    if (scan_one (cfg->groups[i], log, opaque, err, errlen) == -1)
      return -1;
  return 0;
}
