/* nbdraid: the engine's unit tests: an array of member files. */
#include <config.h>

#include <stdio.h>
#include <unistd.h>

#include "test-array.h"

struct raid_array *
test_array (const char *dir, const char *name, const char *array_keys,
            unsigned members, uint64_t bytes,
            const struct raid_create_options *co, struct raid_config *cfg)
{
  static const struct raid_create_options defaults;
  char conf[512], err[1024], path[512];
  struct raid_options ao = { 0 };
  struct raid_array *a;
  unsigned m;
  FILE *fp;

  snprintf (conf, sizeof conf, "%s/%s.conf", dir, name);
  fp = fopen (conf, "w");
  if (!fp) {
    perror (conf);
    return NULL;
  }
  fprintf (fp, "[array]\n%s[members]\n", array_keys);
  for (m = 0; m < members; m++) {
    snprintf (path, sizeof path, "%s/%s-%u.img", dir, name, m);
    fclose (fopen (path, "w"));
    if (truncate (path, (off_t) bytes) == -1) {
      perror (path);
      fclose (fp);
      return NULL;
    }
    fprintf (fp, "member = %s\n", path);
  }
  fclose (fp);
  if (raid_config_load (conf, cfg, err, sizeof err) == -1)
    a = NULL;
  else if (raid_create (cfg, co ? co : &defaults, err, sizeof err) == -1 ||
           !(a = raid_assemble (cfg, &ao, err, sizeof err)))
    raid_config_free (cfg), a = NULL;
  if (!a)
    fprintf (stderr, "FAIL: %s: %s\n", name, err);
  return a;
}
