/* nbdraid: the admin tool, modelled on mdadm.
 *
 *   nbdraid create CONFIG [...]      nbdraid examine [--json] MEMBER...
 *   nbdraid scan [--json] DEVICE|DIR|GLOB|URI...
 *   nbdraid status|fail|add|... CONFIG [...]   (a running array)
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "commands.h"

static const struct {
  const char *name;
  int (*run) (int argc, char **argv);
  const char *usage;
} commands[] = {
  { "create", cmd_create, "create CONFIG [--assume-clean] [--force] "
    "[--arrange] [--strict-controllers]" },
  { "examine", cmd_examine, "examine [--json] MEMBER|CONFIG..." },
  { "scan", cmd_scan, "scan [--json] DEVICE|DIR|GLOB|URI..." },
  { "zero-superblock", cmd_zero_superblock, "zero-superblock DEVICE..." },
  { "status", cmd_admin, NULL },
  { "detail", cmd_admin, NULL },
  { "fail", cmd_admin, NULL },
  { "remove", cmd_admin, NULL },
  { "add", cmd_admin, NULL },
  { "re-add", cmd_admin, NULL },
  { "replace", cmd_admin, NULL },
  { "grow", cmd_admin, NULL },
  { "check", cmd_admin, NULL },
  { "repair", cmd_admin, NULL },
  { "idle", cmd_admin, NULL },
  { "speed-limit", cmd_admin, NULL },
  { "readonly", cmd_admin, NULL },
  { "readwrite", cmd_admin, NULL },
  { "monitor", cmd_monitor, "monitor CONFIG [--program CMD] [--syslog] "
    "[--mail ADDR] [--oneshot] [--test] [--no-reconnect]" },
  { "wait", cmd_admin, NULL },
  { "stop", cmd_admin, NULL },
  { "reload", cmd_admin, NULL },
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* Print command i's usage line on fp, after prefix. */
static void
usage_line (FILE *fp, const char *prefix, size_t i)
{
  if (commands[i].usage)
    fprintf (fp, "%snbdraid %s\n", prefix, commands[i].usage);
  else                          /* a verb on a running array */
    fprintf (fp, "%snbdraid %s CONFIG%s%s\n", prefix, commands[i].name,
             *admin_verb_args (commands[i].name) ? " " : "",
             admin_verb_args (commands[i].name));
}

/* Print every command's usage on fp. */
static void
usage (FILE *fp)
{
  size_t i;

  fprintf (fp, "usage:\n");
  for (i = 0; i < N_COMMANDS; i++)
    usage_line (fp, "  ", i);
  fprintf (fp, "CONFIG may be replaced by --socket PATH.  See "
           "nbdraid(8).\n");
}

/* Run the command argv[1] names, with the arguments after it. */
int
main (int argc, char **argv)
{
  size_t i;

  if (argc < 2) {
    usage (stderr);
    return 2;
  }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0) {
    usage (stdout);
    return 0;
  }
  if (strcmp (argv[1], "--version") == 0) {
    printf ("nbdraid %s\n", PACKAGE_VERSION);
    return 0;
  }
  for (i = 0; i < N_COMMANDS; i++)
    if (strcmp (argv[1], commands[i].name) == 0) {
      if (argc == 3 && (strcmp (argv[2], "--help") == 0 ||
                        strcmp (argv[2], "-h") == 0)) {
        usage_line (stdout, "usage: ", i);
        return 0;
      }
      return commands[i].run (argc - 1, argv + 1);
    }
  fprintf (stderr, "nbdraid: unknown command '%s' (nbdraid --help lists "
           "them)\n", argv[1]);
  return 2;
}
