/* nbdkit-raid-plugin: routine events and warnings, which are not
 * errors.
 *
 * nbdkit 1.32 gives plugins nbdkit_error and nbdkit_debug only, so a
 * finished recovery logged as an error printed "error:".  These lines
 * go where nbdkit's own default puts its messages: on stderr in nbdkit's
 * format while nbdkit runs in the foreground, to syslog once it has
 * forked into the background (nbdkit's --log option is not followed).
 */
#include <config.h>

#include <stdio.h>
#include <sys/types.h>
#include <syslog.h>
#include <unistd.h>

#include "notice.h"

static pid_t ready_pid;

void
notice_start (void)
{
  ready_pid = getpid ();
}

void
notice (const char *what, const char *msg)
{
  /* nbdkit forks into the background after .get_ready, unless -f. */
  if (ready_pid && getpid () != ready_pid)
    syslog (what[0] == 'w' ? LOG_WARNING : LOG_INFO, "raid: %s: %s", what,
            msg);
  else
    fprintf (stderr, "nbdkit: raid: %s: %s\n", what, msg);
}
