/* nbdraid: where an array's control socket and check state live when
 * its config does not say: root's system directories, a service
 * user's /run/nbdraid, or the caller's XDG directories. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "raid.h"

void
raid_config_socket_path (const struct raid_config *cfg, char *buf, size_t len)
{
  const char *rt = getenv ("XDG_RUNTIME_DIR");

  struct stat st;

  /* /run/nbdraid is root's, or a service user's when it owns it (as
   * systemd's RuntimeDirectory=nbdraid makes it): where root looks. */
  if (cfg->socket)
    snprintf (buf, len, "%s", cfg->socket);
  else if (geteuid () == 0 ||
           (stat ("/run/nbdraid", &st) == 0 && S_ISDIR (st.st_mode) &&
            st.st_uid == geteuid ()))
    snprintf (buf, len, "/run/nbdraid/%s.sock", cfg->name);
  else if (rt && *rt)
    snprintf (buf, len, "%s/nbdraid/%s.sock", rt, cfg->name);
  else
    snprintf (buf, len, "/tmp/nbdraid-%u/%s.sock", (unsigned) geteuid (),
              cfg->name);
}

void
raid_config_state_path (const struct raid_config *cfg, const char *uuid,
                        char *buf, size_t len)
{
  const char *state = getenv ("XDG_STATE_HOME"), *home = getenv ("HOME");

  if (cfg->state_dir)
    snprintf (buf, len, "%s/%s.check", cfg->state_dir, uuid);
  else if (geteuid () == 0)
    snprintf (buf, len, "/var/lib/nbdraid/%s.check", uuid);
  else if (state && *state)
    snprintf (buf, len, "%s/nbdraid/%s.check", state, uuid);
  else
    snprintf (buf, len, "%s/.local/state/nbdraid/%s.check",
              home && *home ? home : "/tmp", uuid);
}
