/* nbdraid monitor: the events of a running array, as mdadm --monitor
 * reports them.
 *
 *   nbdraid monitor CONFIG|--socket PATH [--program CMD] [--syslog]
 *                   [--mail ADDR] [--oneshot] [--test] [--no-reconnect]
 *
 * On connecting, the server first tells how the array stands
 * (DegradedArray, FailedArray, SparesMissing, RebuildStarted), then
 * each event as it happens.  When the server goes away the monitor says
 * so (DeviceDisappeared, mdadm's word for an array that is gone) and
 * waits for it to come back (NewArray), or with --no-reconnect exits 1;
 * a monitor started before the server waits for it the same way.
 * --oneshot reports how the array stands and exits, for cron; --test
 * adds a TestMessage, to try the --program, syslog or mail route.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "control-client.h"
#include "monitor-mail.h"

struct monitor {
  const char *socket, *config, *program, *mail;
  bool syslog, oneshot, test, reconnect;
  char array[64];               /* its name, once the server said it */
};

/* Events that say something is wrong, as mdadm rates them: logged at
 * LOG_CRIT, the rest at LOG_INFO. */
static bool
alarming (const char *event)
{
  static const char *const bad[] = {
    "Fail", "FailSpare", "DegradedArray", "FailedArray", "SparesMissing",
    "DeviceDisappeared", "MismatchLocated",
  };
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (strcmp (event, bad[i]) == 0)
      return true;
  return false;
}

/* Run the program for an event, as mdadm does: PROGRAM EVENT ARRAY
 * [DEVICE-OR-INFO [DETAIL]], and wait for it, so events keep their
 * order. */
static void
run_program (const char *program, const char *event, const char *array,
             const char *member, const char *detail)
{
  const char *argv[6] = { program, event, array };
  int argc = 3, status;
  pid_t pid;

  if (member[0])
    argv[argc++] = member;
  if (detail[0])
    argv[argc++] = detail;
  pid = fork ();
  if (pid == 0) {
    execvp (program, (char **) argv);
    fprintf (stderr, "nbdraid: %s: %s\n", program, strerror (errno));
    _exit (127);
  }
  if (pid > 0)
    waitpid (pid, &status, 0);
}

/* Report one event: a timestamped line on stdout, syslog, mail (the
 * alarming ones), the program. */
static void
report (const struct monitor *mo, const char *event, const char *array,
        const char *member, const char *detail)
{
  char when[32];
  time_t now = time (NULL);
  struct tm tm;

  strftime (when, sizeof when, "%Y-%m-%d %H:%M:%S",
            localtime_r (&now, &tm));
  printf ("%s %s %s%s%s%s%s\n", when, event, array, member[0] ? " " : "",
          member, detail[0] ? " " : "", detail);
  fflush (stdout);
  if (mo->syslog)
    syslog (alarming (event) ? LOG_CRIT : LOG_INFO, "%s event on array %s%s%s"
            "%s%s", event, array, member[0] ? ": " : "", member,
            detail[0] ? ": " : "", detail);
  if (mo->mail && (alarming (event) || strcmp (event, "TestMessage") == 0))
    mail_event (mo->mail, event, array, member, detail);
  if (mo->program)
    run_program (mo->program, event, array, member, detail);
}

/* An EVENT line: EVENT NAME ARRAY MEMBER DETAIL, tab-separated. */
static void
report_line (const struct monitor *mo, char *line)
{
  char *f[5] = { line, "", "", "", "" };
  int n = 1;

  while (n < 5 && (line = strchr (line, '\t')) != NULL) {
    *line++ = '\0';
    f[n++] = line;
  }
  report (mo, f[1], f[2], f[3], f[4]);
}

/* One connection: subscribe, report until the server goes.  1 if it
 * went, -1 if it would not take us, 0 for --oneshot's clean end. */
static int
watch (struct monitor *mo, int fd, bool back)
{
  FILE *in = fdopen (fd, "r");
  char *line = NULL, *nl;
  size_t len = 0;
  int r = 1;

  if (!in) {
    close (fd);
    return 1;
  }
  send (fd, "monitor\n", 8, MSG_NOSIGNAL);
  if (getline (&line, &len, in) == -1)
    goto gone;
  if (strcmp (line, "OK\n") != 0) {       /* refused: no use trying again */
    fprintf (stderr, "nbdraid: %s", strncmp (line, "ERR ", 4) == 0
             ? line + 4 : line);
    r = -1;
    goto out;
  }
  while (getline (&line, &len, in) != -1) {
    if ((nl = strchr (line, '\n')))
      *nl = '\0';
    if (strncmp (line, "EVENT\t", 6) == 0) {
      report_line (mo, line);
      continue;
    }
    /* "monitoring array NAME": what stood is told, events follow. */
    if (sscanf (line, "monitoring array %63s", mo->array) == 1) {
      printf ("%s\n", line);
      fflush (stdout);
      if (back)
        report (mo, "NewArray", mo->array, "", "");
      if (mo->test)
        report (mo, "TestMessage", mo->array, "", "");
      mo->test = false;
      if (mo->oneshot) {
        r = 0;
        goto out;
      }
    }
  }
 gone:
  report (mo, "DeviceDisappeared", mo->array[0] ? mo->array : "?", "",
          "the server went away");
 out:
  free (line);
  fclose (in);
  return r;
}

int
cmd_monitor (int argc, char **argv)
{
  static const struct option longopts[] = {
    { "socket", required_argument, NULL, 'S' },
    { "program", required_argument, NULL, 'p' },
    { "syslog", no_argument, NULL, 'l' },
    { "mail", required_argument, NULL, 'm' },
    { "oneshot", no_argument, NULL, '1' },
    { "test", no_argument, NULL, 't' },
    { "no-reconnect", no_argument, NULL, 'n' },
    { NULL, 0, NULL, 0 },
  };
  struct monitor mo = { .reconnect = true };
  bool back = false;
  int c, fd;

  while ((c = getopt_long (argc, argv, "S:", longopts, NULL)) != -1)
    switch (c) {
    case 'S': mo.socket = optarg; break;
    case 'p': mo.program = optarg; break;
    case 'l': mo.syslog = true; break;
    case 'm': mo.mail = optarg; break;
    case '1': mo.oneshot = true; break;
    case 't': mo.test = true; break;
    case 'n': mo.reconnect = false; break;
    default: goto usage;
    }
  if (optind < argc && !mo.socket)
    mo.config = argv[optind++];
  if (optind != argc || (!mo.socket && !mo.config))
    goto usage;
  if (mo.syslog)
    openlog ("nbdraid", LOG_PID, LOG_DAEMON);
  /* A sendmail that exits before reading is a failed mail, not the
   * end of the monitor. */
  if (mo.mail)
    signal (SIGPIPE, SIG_IGN);
  fd = control_connect (mo.socket, mo.config, mo.reconnect && !mo.oneshot);
  if (fd == -1 && (mo.oneshot || !mo.reconnect))
    return 1;
  if (fd == -1) {
    fprintf (stderr, "nbdraid: monitor: waiting for the array to be "
             "served\n");
    while ((fd = control_connect (mo.socket, mo.config, true)) == -1)
      sleep (1);
    back = true;
  }
  for (;;) {
    int r = watch (&mo, fd, back);

    if (r <= 0)
      return r == 0 ? 0 : 1;
    if (mo.oneshot || !mo.reconnect) {
      fprintf (stderr, "nbdraid: monitor: the server of array %s went "
               "away\n", mo.array[0] ? mo.array : "?");
      return 1;
    }
    fprintf (stderr, "nbdraid: monitor: the server of array %s went away; "
             "waiting for it to come back\n", mo.array[0] ? mo.array : "?");
    while ((fd = control_connect (mo.socket, mo.config, true)) == -1)
      sleep (1);
    back = true;
  }
 usage:
  fprintf (stderr, "usage: nbdraid monitor CONFIG|--socket PATH [--program "
           "CMD] [--syslog] [--mail ADDR] [--oneshot] [--test] "
           "[--no-reconnect]\n");
  return 2;
}
