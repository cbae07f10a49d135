/* nbdraid: the engine's unit tests: an array of member files. */
#include <config.h>

#include <stdio.h>
#include <unistd.h>

#include "test-array.h"

struct raid_array *
test_array (const char *dir, const char *name, const char *array_keys,
            unsigned members, uint64_t bytes,
            const struct raid_create_options *co, struct raid_config *cfg,
            char *err, size_t errlen)
{
  return test_array_flagged (dir, name, array_keys, members, bytes, NULL, co,
                             cfg, err, errlen);
}

struct raid_array *
test_array_flagged (const char *dir, const char *name,
                    const char *array_keys, unsigned members, uint64_t bytes,
                    const char *last_flags,
                    const struct raid_create_options *co,
                    struct raid_config *cfg, char *err, size_t errlen)
{
  static const struct raid_create_options defaults;
  char conf[512], path[512];
  struct raid_options ao = { 0 };
  struct raid_array *a;
  unsigned m;
  FILE *fp;

  snprintf (conf, sizeof conf, "%s/%s.conf", dir, name);
  fp = fopen (conf, "w");
  if (!fp) {
    snprintf (err, errlen, "%s: %m", conf);
    return NULL;
  }
  fprintf (fp, "[array]\n%s[members]\n", array_keys);
  for (m = 0; m < members; m++) {
    snprintf (path, sizeof path, "%s/%s-%u.img", dir, name, m);
    fclose (fopen (path, "w"));
    if (truncate (path, (off_t) bytes) == -1) {
      snprintf (err, errlen, "%s: truncate: %m", path);
      fclose (fp);
      return NULL;
    }
    fprintf (fp, "member = %s%s%s\n", path,
             last_flags && m + 1 == members ? " " : "",
             last_flags && m + 1 == members ? last_flags : "");
  }
  fclose (fp);
  if (raid_config_load (conf, cfg, err, errlen) == -1)
    a = NULL;
  else if (raid_create (cfg, co ? co : &defaults, err, errlen) == -1 ||
           !(a = raid_assemble (cfg, &ao, err, errlen)))
    raid_config_free (cfg), a = NULL;
  return a;
}
