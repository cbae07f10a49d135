/* nbdraid's verbs on a running array, through its control socket:
 *
 *   nbdraid status CONFIG [--json] [--watch]
 *   nbdraid fail CONFIG MEMBER [--force]     nbdraid remove CONFIG MEMBER
 *   nbdraid add CONFIG PATH                  nbdraid replace CONFIG MEMBER [--with PATH]
 *   nbdraid check|repair|idle CONFIG         nbdraid speed-limit CONFIG [MIN MAX]
 *   nbdraid wait CONFIG
 *
 * CONFIG may be replaced by --socket PATH.  nbdraid monitor is
 * cmd-monitor.c.
 */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "commands.h"
#include "control-client.h"
#include "raid.h"

struct request {
  const char *verb;
  const char *socket;
  const char *config;
  bool watch;
  char line[4096];
};

/* Print the verb's usage line; returns a usage error's exit status. */
static int
usage (const char *verb)
{
  fprintf (stderr, "usage: nbdraid %s CONFIG|--socket PATH ...; see "
           "nbdraid(8)\n", verb);
  return 2;
}

/* A path the server can open: absolute, as the client means it. */
static const char *
absolute (const char *path, char *buf, size_t len)
{
  char cwd[PATH_MAX];

  if (path[0] == '/' || raid_spec_is_uri (path) || !getcwd (cwd, sizeof cwd))
    return path;
  snprintf (buf, len, "%s/%s", cwd, path);
  return buf;
}

/* Append a word to the request line, tab-separated; a word with a tab
 * or newline, or one that does not fit, is refused. */
static int
append (struct request *rq, const char *word)
{
  size_t used = strlen (rq->line);

  if (strchr (word, '\t') || strchr (word, '\n') ||
      used + strlen (word) + 2 >= sizeof rq->line) {
    fprintf (stderr, "nbdraid: argument '%s' is not usable\n", word);
    return -1;
  }
  snprintf (rq->line + used, sizeof rq->line - used, "%s%s",
            used ? "\t" : "", word);
  return 0;
}

/* Send the request, print the answer.  0 on OK, 1 on ERR. */
static int
exchange (struct request *rq)
{
  FILE *in;
  char *line = NULL, out[sizeof rq->line + 1];
  size_t len = 0;
  int fd = control_connect (rq->socket, rq->config, false), status = 1;

  if (fd == -1)
    return 1;
  /* A send that fails still leaves the server's answer to read. */
  snprintf (out, sizeof out, "%s\n", rq->line);
  send (fd, out, strlen (out), MSG_NOSIGNAL);
  if (!(in = fdopen (fd, "r"))) {
    fprintf (stderr, "nbdraid: %s\n", strerror (errno));
    close (fd);
    return 1;
  }
  if (getline (&line, &len, in) == -1)
    fprintf (stderr, "nbdraid: the server closed the connection\n");
  else if (strncmp (line, "ERR ", 4) == 0)
    fprintf (stderr, "nbdraid: %s", line + 4);
  else if (strcmp (line, "OK\n") == 0) {
    status = 0;
    while (getline (&line, &len, in) != -1) {
      fputs (line, stdout);
      fflush (stdout);
    }
  }
  else
    fprintf (stderr, "nbdraid: unexpected answer: %s", line);
  free (line);
  fclose (in);
  return status;
}

int
cmd_admin (int argc, char **argv)
{
  struct request rq = { .verb = argv[0] };
  char abs[PATH_MAX + 256], **words = calloc ((size_t) argc, sizeof *words);
  int i, nwords = 0;

  if (!words)
    return 1;

  for (i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--socket") == 0 || strcmp (argv[i], "-S") == 0) {
      if (++i == argc)
        return usage (rq.verb);
      rq.socket = argv[i];
    }
    else if (strcmp (argv[i], "--watch") == 0)
      rq.watch = true;
    else if (!rq.socket && !rq.config && argv[i][0] != '-')
      rq.config = argv[i];
    else
      words[nwords++] = argv[i];        /* the verb's own */
  }
  if (!rq.socket && !rq.config)
    return usage (rq.verb);
  if (append (&rq, rq.verb))
    return 2;
  for (i = 0; i < nwords; i++) {
    const char *word = words[i];
    /* Devices given to add and --with are paths on this host. */
    if ((strcmp (rq.verb, "add") == 0 && word[0] != '-') ||
        (i > 0 && strcmp (words[i - 1], "--with") == 0))
      word = absolute (word, abs, sizeof abs);
    if (append (&rq, word))
      return 2;
  }
  if (!rq.watch)
    return exchange (&rq);
  for (;;) {                    /* status --watch, like watch(1) */
    printf ("\033[H\033[2J");
    if (exchange (&rq) != 0)
      return 1;
    fflush (stdout);
    sleep (1);
  }
}
