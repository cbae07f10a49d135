/* nbdraid fuzz target: the config file parser (libinih underneath).
 *
 * Input: the contents of a config file, written to a file in a private
 * directory (raid_config_load takes a path, and resolves member paths
 * against the file's directory).  A config it accepts must name its
 * array and have a valid level and member count; either way it must
 * free cleanly (ASan checks for leaks).
 */
#include <config.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config-file.h"
#include "geometry.h"
#include "raid.h"
#include "check.h"


static char dir[] = "/tmp/nbdraid-fuzz-config.XXXXXX";
static char path[sizeof dir + 16];

static void
cleanup (void)
{
  unlink (path);
  rmdir (dir);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  if (!mkdtemp (dir))
    abort ();
  snprintf (path, sizeof path, "%s/a.conf", dir);
  atexit (cleanup);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct raid_config cfg;
  char err[1024], sock[256];
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  unsigned min;

  if (fd == -1 || (size && write (fd, data, size) != (ssize_t) size))
    abort ();
  close (fd);

  err[0] = '\0';
  if (raid_config_load (path, &cfg, err, sizeof err) == -1) {
    CHECK (strncmp (err, path, strlen (path)) == 0);
    return 0;
  }
  CHECK (cfg.name && cfg.name[0]);
  min = raid_level_find (cfg.level)->min_members (cfg.layout);
  CHECK (cfg.nmembers >= min && cfg.nmembers <= RAID_MAX_MEMBERS);
  CHECK (cfg.nspares <= RAID_MAX_MEMBERS);
  raid_config_socket_path (&cfg, sock, sizeof sock);
  raid_config_free (&cfg);
  return 0;
}
