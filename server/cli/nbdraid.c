/* nbdraid: the admin tool, modelled on mdadm.
 *
 *   nbdraid create CONFIG [...]      nbdraid examine [--json] MEMBER...
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
  { "status", cmd_admin, "status CONFIG [--json] [--watch]" },
  { "fail", cmd_admin, "fail CONFIG MEMBER [--force]" },
  { "remove", cmd_admin, "remove CONFIG MEMBER" },
  { "add", cmd_admin, "add CONFIG PATH" },
  { "re-add", cmd_admin, "re-add CONFIG MEMBER" },
  { "replace", cmd_admin, "replace CONFIG MEMBER [--with PATH]" },
  { "check", cmd_admin, "check CONFIG [--budget DURATION] [--from-start]" },
  { "repair", cmd_admin, "repair CONFIG [--budget DURATION] [--from-start]" },
  { "idle", cmd_admin, "idle CONFIG" },
  { "speed-limit", cmd_admin, "speed-limit CONFIG [MIN MAX]  (MB/s)" },
  { "monitor", cmd_monitor, "monitor CONFIG [--program CMD] [--syslog] "
    "[--oneshot] [--test] [--no-reconnect]" },
  { "wait", cmd_admin, "wait CONFIG" },
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* Print every command's usage on fp. */
static void
usage (FILE *fp)
{
  size_t i;

  fprintf (fp, "usage:\n");
  for (i = 0; i < N_COMMANDS; i++)
    fprintf (fp, "  nbdraid %s\n", commands[i].usage);
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
    if (strcmp (argv[1], commands[i].name) == 0)
      return commands[i].run (argc - 1, argv + 1);
  fprintf (stderr, "nbdraid: unknown command '%s' (nbdraid --help lists "
           "them)\n", argv[1]);
  return 2;
}
