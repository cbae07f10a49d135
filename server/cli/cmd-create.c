/* nbdraid create: write md superblocks and sync a new array. */
#include <config.h>

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "commands.h"

#define CREATE_USAGE "nbdraid create CONFIG [--assume-clean] [--force] " \
  "[--arrange] [--strict-controllers]"
#include "raid.h"

/* raid_create's notes, on stderr. */
static void
print_note (void *opaque, enum raid_log_level level, const char *msg)
{
  fprintf (stderr, "nbdraid: %s\n", msg);
}

/* nbdraid create CONFIG: create the array, then say what was created,
 * nested arrays included. */
int
cmd_create (int argc, char **argv)
{
  static const struct option longopts[] = {
    { "assume-clean", no_argument, NULL, 'c' },
    { "force", no_argument, NULL, 'f' },
    { "arrange", no_argument, NULL, 'a' },
    { "strict-controllers", no_argument, NULL, 's' },
    { NULL, 0, NULL, 0 },
  };
  struct raid_create_options opts = { .log = print_note };
  struct raid_config cfg;
  char err[1024];
  unsigned i;
  int c, r;

  while ((c = getopt_long (argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
    case 'c':
      opts.assume_clean = true;
      break;
    case 'f':
      opts.force = true;
      break;
    case 'a':
      opts.arrange = true;
      break;
    case 's':
      opts.strict_controllers = true;
      break;
    default:
      fprintf (stderr, "usage: %s\n", CREATE_USAGE);
      return 2;
    }
  }
  if (optind != argc - 1) {
    fprintf (stderr, "usage: %s\n", CREATE_USAGE);
    return 2;
  }
  if (raid_config_load (argv[optind], &cfg, err, sizeof err) == -1) {
    fprintf (stderr, "nbdraid: %s\n", err);
    return 1;
  }
  r = raid_create (&cfg, &opts, err, sizeof err);
  if (r == -1)
    fprintf (stderr, "nbdraid: %s\n", err);
  else
    for (i = 0; i <= cfg.ngroups; i++) {
      const struct raid_config *g = i ? cfg.groups[i - 1] : &cfg;
      unsigned m, missing = 0;
      bool redundant = raid_level_find (g->level)->tolerates (g->layout,
                                                              g->nmembers);

      for (m = 0; m < g->nmembers; m++)
        missing += g->members[m].missing;
      fprintf (stderr, "nbdraid: created array '%s': RAID%d, %u members%s, "
               "%u %sspares%s\n", g->name, g->level, g->nmembers,
               missing ? " (degraded)" : "", g->nspares,
               i == 0 && cfg.ngroups ? "shared " : "",
               opts.assume_clean || !redundant || missing ? ""
               : "; the server syncs it in the background");
    }
  raid_config_free (&cfg);
  return r == -1 ? 1 : 0;
}
