/* nbdraid: reaching a running array's control socket. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <libgen.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control-client.h"
#include "raid.h"

/* Is path's directory uid's alone: owned by it, writable by no one else?
 * Then only uid (or root) can have put a socket there. */
static bool
own_directory (const char *path, uid_t uid)
{
  char dir[PATH_MAX];
  struct stat st;

  snprintf (dir, sizeof dir, "%s", path);
  return stat (dirname (dir), &st) == 0 && S_ISDIR (st.st_mode) &&
    st.st_uid == uid && (st.st_mode & 022) == 0;
}

/* Only a server run by root or by ourselves may answer: anyone else
 * listening on the path (having moved the real socket aside) could fake
 * status, swallow a "fail" and inject monitor events.  Root also
 * believes a service user's server whose socket sits in a directory
 * that user alone can write (its RuntimeDirectory, or the socket = the
 * admin gave it): no one else could have put it there. */
static bool
trusted_server (int fd, const char *path)
{
  struct ucred cred;
  socklen_t len = sizeof cred;

  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
    fprintf (stderr, "nbdraid: %s: SO_PEERCRED: %s\n", path,
             strerror (errno));
    return false;
  }
  if (cred.uid != 0 && cred.uid != geteuid () &&
      !(geteuid () == 0 && own_directory (path, cred.uid))) {
    fprintf (stderr, "nbdraid: %s: served by uid %u, neither root nor you; "
             "not trusting it\n", path, (unsigned) cred.uid);
    return false;
  }
  return true;
}

int
control_connect (const char *socket_path, const char *config, bool quiet)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  char path[sizeof addr.sun_path], err[1024];
  struct raid_config cfg;
  int fd;

  if (socket_path)
    snprintf (path, sizeof path, "%s", socket_path);
  else {
    if (raid_config_load (config, &cfg, err, sizeof err) == -1) {
      fprintf (stderr, "nbdraid: %s\n", err);
      return -1;
    }
    raid_config_socket_path (&cfg, path, sizeof path);
    raid_config_free (&cfg);
  }
  snprintf (addr.sun_path, sizeof addr.sun_path, "%s", path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd == -1 || connect (fd, (struct sockaddr *) &addr, sizeof addr) == -1) {
    if (!quiet)
      fprintf (stderr, "nbdraid: %s: %s (is the array being served?)\n",
               path, strerror (errno));
    if (fd >= 0)
      close (fd);
    return -1;
  }
  if (!trusted_server (fd, path)) {
    close (fd);
    return -1;
  }
  return fd;
}
