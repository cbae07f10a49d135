/* nbdraid's verbs on a running array, through its control socket:
 *
 *   nbdraid status CONFIG [--json|--prometheus] [--watch]
 *   nbdraid fail CONFIG MEMBER [--force]     nbdraid remove CONFIG MEMBER
 *   nbdraid add CONFIG PATH                  nbdraid replace CONFIG MEMBER [--with PATH]
 *   nbdraid check|repair|idle CONFIG         nbdraid speed-limit CONFIG [MIN MAX]
 *   nbdraid grow CONFIG --size|--array-size max|SIZE|--raid-devices N|--level L
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

/* What each verb takes after CONFIG (or --socket PATH): how many words
 * of its own, at least and at most, and the options it accepts; those
 * in `valued` take a value.  --array NAME goes with any of them. */
static const struct verb {
  const char *name;
  int min, max;
  const char *args;             /* for its usage line */
  const char *options[7];
} verbs[] = {
  { "status",
    0,
    0,
    "[--json|--prometheus] [--watch]",
    { "--json", "--prometheus", "--watch" } },
  { "detail", 0, 0, "", { NULL } },
  { "fail", 1, 1, "MEMBER|detached [--force]", { "--force" } },
  { "remove", 1, 1, "MEMBER|failed|detached", { NULL } },
  { "add", 1, 1, "PATH", { NULL } },
  { "re-add", 1, 1, "MEMBER", { NULL } },
  { "replace", 1, 1, "MEMBER [--with PATH]", { "--with" } },
  { "grow",
    0,
    0,
    "--size max|SIZE | --array-size max|SIZE | --raid-devices N | "
    "--level L [--layout NAME] | --chunk SIZE | --layout NAME",
    { "--size", "--array-size", "--raid-devices", "--level", "--chunk",
      "--layout" } },
  { "check",
    0,
    0,
    "[--budget DURATION] [--from-start]",
    { "--budget", "--from-start" } },
  { "repair",
    0,
    0,
    "[--budget DURATION] [--from-start]",
    { "--budget", "--from-start" } },
  { "idle", 0, 0, "", { NULL } },
  { "speed-limit", 0, 2, "[MIN MAX]  (MiB/s)", { NULL } },
  { "readonly", 0, 0, "", { NULL } },
  { "readwrite", 0, 0, "", { NULL } },
  { "wait", 0, 0, "", { NULL } },
  { "stop", 0, 0, "[--force]", { "--force" } },
  { "reload", 0, 0, "", { NULL } },
};

const char *
admin_verb_args (const char *verb)
{
  size_t k;

  for (k = 0; k < sizeof verbs / sizeof verbs[0]; k++)
    if (strcmp (verbs[k].name, verb) == 0)
      return verbs[k].args;
  return NULL;
}

/* How many of grow's changes the request line asks for. */
static int
grow_options (const char *line)
{
  return !!strstr (line, "\t--size\t") + !!strstr (line, "\t--array-size\t")
         + !!strstr (line, "\t--raid-devices\t")
         + !!strstr (line, "\t--level\t") + !!strstr (line, "\t--chunk\t")
         + !!strstr (line, "\t--layout\t");
}

/* Options that take a value. */
static bool
valued (const char *option)
{
  return strcmp (option, "--with") == 0 || strcmp (option, "--budget") == 0
         || strcmp (option, "--size") == 0 || strcmp (option, "--array") == 0
         || strcmp (option, "--array-size") == 0
         || strcmp (option, "--raid-devices") == 0
         || strcmp (option, "--level") == 0 || strcmp (option, "--chunk") == 0
         || strcmp (option, "--layout") == 0;
}

/* Print the verb's usage line on fp; return a usage error's status (or
 * 0 for --help, on stdout). */
static int
usage_of (const struct verb *v, FILE *fp)
{
  fprintf (fp, "usage: nbdraid %s CONFIG|--socket PATH %s%s[--array NAME]"
           "\n", v->name, v->args, v->args[0] ? " " : "");
  return fp == stdout ? 0 : 2;
}

/* Whether the verb takes this option. */
static bool
takes (const struct verb *v, const char *option)
{
  size_t i;

  if (strcmp (option, "--array") == 0)
    return true;
  for (i = 0; i < sizeof v->options / sizeof v->options[0]; i++)
    if (v->options[i] && strcmp (v->options[i], option) == 0)
      return true;
  return false;
}

/* A MEMBER or PATH as the server must see it: a role number or an NBD
 * URI as given, a path made absolute from where we are (the server
 * finds the device by what it is, so any name of it will do). */
static const char *
absolute (const char *path, char *buf, size_t len)
{
  char cwd[PATH_MAX];

  if (path[0] == '/' || raid_spec_is_uri (path) ||
      strspn (path, "0123456789") == strlen (path) ||
      !getcwd (cwd, sizeof cwd))
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
    /* stdout stays buffered: the answer leaves in one write, so a
     * reader that stops early (grep -q) does not kill us with SIGPIPE. */
    while (getline (&line, &len, in) != -1)
      fputs (line, stdout);
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
  const struct verb *v = NULL;
  char abs[PATH_MAX + 256];
  int i, nargs = 0;
  size_t k;

  for (k = 0; k < sizeof verbs / sizeof verbs[0]; k++)
    if (strcmp (verbs[k].name, rq.verb) == 0)
      v = &verbs[k];
  if (!v || append (&rq, rq.verb))
    return 2;
  /* With --socket PATH anywhere, there is no CONFIG among the words. */
  for (i = 1; i < argc - 1; i++)
    if (strcmp (argv[i], "--socket") == 0 || strcmp (argv[i], "-S") == 0)
      rq.socket = argv[i + 1];
  /* Checked here, before anything is sent: a wrong call is a usage
   * error whatever the server would say. */
  for (i = 1; i < argc; i++) {
    const char *w = argv[i];

    if (strcmp (w, "--help") == 0 || strcmp (w, "-h") == 0)
      return usage_of (v, stdout);
    if (strcmp (w, "--socket") == 0 || strcmp (w, "-S") == 0) {
      if (++i == argc || rq.socket != argv[i])
        return usage_of (v, stderr);      /* twice, or without a path */
    }
    else if (strcmp (w, "--watch") == 0 && takes (v, w))
      rq.watch = true;
    else if (w[0] == '-' && w[1] == '-') {
      if (!takes (v, w) || (valued (w) && i + 1 == argc)) {
        fprintf (stderr, "nbdraid %s: %s %s\n", v->name, w, takes (v, w)
                 ? "needs a value" : "is not one of its options");
        return usage_of (v, stderr);
      }
      if (append (&rq, w))
        return 2;
      if (valued (w) &&
          append (&rq, strcmp (w, "--with") == 0
                  ? absolute (argv[++i], abs, sizeof abs) : argv[++i]))
        return 2;
    }
    else if (!rq.socket && !rq.config)
      rq.config = w;
    else if (++nargs > v->max)
      return usage_of (v, stderr);
    /* MEMBER and PATH as we mean them (but mdadm's keywords); MIN MAX
     * as they are. */
    else if (append (&rq, v->max == 1 && strcmp (w, "failed") != 0 &&
                     strcmp (w, "detached") != 0
                     ? absolute (w, abs, sizeof abs) : w))
      return 2;
  }
  /* grow takes one of --size, --array-size, --raid-devices, --level,
   * --chunk and --layout, or --level with --layout. */
  if ((!rq.socket && !rq.config) || nargs < v->min
      || (strcmp (v->name, "speed-limit") == 0 && nargs == 1)
      || (strcmp (v->name, "grow") == 0 && grow_options (rq.line) != 1
          && !(grow_options (rq.line) == 2 && strstr (rq.line, "\t--level\t")
               && strstr (rq.line, "\t--layout\t"))))
    return usage_of (v, stderr);
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
