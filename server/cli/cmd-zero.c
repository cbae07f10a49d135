/* nbdraid zero-superblock DEVICE...: wipe md superblocks, as mdadm
 * --zero-superblock does, refusing a device an array here serves. */
#include <config.h>

#include <stdio.h>

#include "commands.h"
#include "raid.h"

int
cmd_zero_superblock (int argc, char **argv)
{
  char err[512];
  int i, status = 0;

  if (argc < 2) {
    fprintf (stderr, "usage: nbdraid zero-superblock DEVICE...\n");
    return 2;
  }
  for (i = 1; i < argc; i++)
    if (raid_zero_superblock (argv[i], err, sizeof err) == -1) {
      fprintf (stderr, "nbdraid: %s\n", err);
      status = 1;
    }
  return status;
}
