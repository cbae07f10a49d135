/* nbdkit-raid-plugin: routine events and warnings, which are not
 * errors.
 *
 * nbdkit 1.32 gives plugins nbdkit_error and nbdkit_debug only, so a
 * finished recovery logged as an error printed "error:".  These lines
 * go where nbdkit's own default puts its messages: on stderr in nbdkit's
 * format while nbdkit runs in the foreground, to syslog once it has
 * forked into the background (nbdkit's --log option is not followed).
 * When stderr is the journal (a systemd unit running nbdkit -f), each
 * line starts with its syslog priority, "<3>", "<4>" or "<6>", which
 * journald takes as the line's level (sd-daemon(3)): errors too, which
 * nbdkit_error would print without one.
 */
#include <config.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <syslog.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "notice.h"

static pid_t ready_pid;
static bool to_journal;

/* systemd says in JOURNAL_STREAM ("DEV:INODE") which stream it made
 * the journal: is it still our stderr? */
static bool
stderr_is_journal (void)
{
  const char *js = getenv ("JOURNAL_STREAM");
  uintmax_t dev, ino;
  struct stat st;

  return js && sscanf (js, "%ju:%ju", &dev, &ino) == 2 &&
    fstat (STDERR_FILENO, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

void
notice_start (void)
{
  ready_pid = getpid ();
  to_journal = stderr_is_journal ();
}

void
notice_error (const char *msg)
{
  if (to_journal && getpid () == ready_pid)
    fprintf (stderr, "<3>nbdkit: raid: error: %s\n", msg);
  else
    nbdkit_error ("%s", msg);
}

void
notice (const char *what, const char *msg)
{
  /* nbdkit forks into the background after .get_ready, unless -f. */
  if (ready_pid && getpid () != ready_pid)
    syslog (what[0] == 'w' ? LOG_WARNING : LOG_INFO, "raid: %s: %s", what,
            msg);
  else
    fprintf (stderr, "%snbdkit: raid: %s: %s\n",
             !to_journal ? "" : what[0] == 'w' ? "<4>" : "<6>", what, msg);
}
