/* nbdraid's verbs on a running array, through its control socket:
 *
 *   nbdraid status CONFIG [--json] [--watch]
 *   nbdraid fail CONFIG MEMBER [--force]     nbdraid remove CONFIG MEMBER
 *   nbdraid add CONFIG PATH                  nbdraid replace CONFIG MEMBER [--with PATH]
 *   nbdraid check|repair|idle CONFIG         nbdraid speed-limit CONFIG [MIN MAX]
 *   nbdraid monitor CONFIG [--program CMD]  nbdraid wait CONFIG
 *
 * CONFIG may be replaced by --socket PATH.
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
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "raid.h"

struct request {
  const char *verb;
  const char *socket;
  const char *config;
  const char *program;          /* monitor --program */
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

/* Only a server run by root or by ourselves may answer: anyone else
 * listening on the path (having moved the real socket aside) could fake
 * status, swallow a "fail" and inject monitor events. */
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
  if (cred.uid != 0 && cred.uid != geteuid ()) {
    fprintf (stderr, "nbdraid: %s: served by uid %u, neither root nor you; "
             "not trusting it\n", path, (unsigned) cred.uid);
    return false;
  }
  return true;
}

/* Connect to the control socket (--socket, or the config's) and check
 * who serves it: the fd, or -1 with a message printed. */
static int
connect_socket (const struct request *rq)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  char path[sizeof addr.sun_path], err[1024];
  struct raid_config cfg;
  int fd;

  if (rq->socket)
    snprintf (path, sizeof path, "%s", rq->socket);
  else {
    if (raid_config_load (rq->config, &cfg, err, sizeof err) == -1) {
      fprintf (stderr, "nbdraid: %s\n", err);
      return -1;
    }
    raid_config_socket_path (&cfg, path, sizeof path);
    raid_config_free (&cfg);
  }
  snprintf (addr.sun_path, sizeof addr.sun_path, "%s", path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd == -1 || connect (fd, (struct sockaddr *) &addr, sizeof addr) == -1) {
    fprintf (stderr, "nbdraid: %s: %s (is the array being served?)\n", path,
             strerror (errno));
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

/* An EVENT line's fields: EVENT NAME ARRAY MEMBER DETAIL, empty ones
 * kept.  Returns how many. */
static int
split_event (char *line, char **f)
{
  int n = 0;

  f[n++] = line;
  while (n < 5 && (line = strchr (line, '\t')) != NULL) {
    *line++ = '\0';
    f[n++] = line;
  }
  return n;
}

/* Print an event, and run the monitor program for it as mdadm does:
 * PROGRAM EVENT ARRAY [MEMBER [DETAIL]].  Wait for it, so events are
 * handled in order. */
static void
handle_event (const char *program, char *line)
{
  char *f[5], *argv[6];
  int n = split_event (line, f), i, argc = 0, status;
  pid_t pid;

  for (i = 1; i < n; i++)
    if (f[i][0])
      printf ("%s%s", i > 1 ? " " : "", f[i]);
  printf ("\n");
  fflush (stdout);
  if (!program || n < 3)
    return;
  argv[argc++] = (char *) program;
  argv[argc++] = f[1];
  argv[argc++] = f[2];
  if (n > 3 && (f[3][0] || (n > 4 && f[4][0])))
    argv[argc++] = f[3];
  if (n > 4 && f[4][0])
    argv[argc++] = f[4];
  argv[argc] = NULL;
  pid = fork ();
  if (pid == 0) {
    execvp (program, argv);
    fprintf (stderr, "nbdraid: %s: %s\n", program, strerror (errno));
    _exit (127);
  }
  if (pid > 0)
    waitpid (pid, &status, 0);
}

/* Send the request, print the answer.  0 on OK, 1 on ERR. */
static int
exchange (struct request *rq)
{
  FILE *in;
  char *line = NULL, *nl, out[sizeof rq->line + 1];
  size_t len = 0;
  int fd = connect_socket (rq), status = 1;

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
      if (strncmp (line, "EVENT\t", 6) == 0) {
        if ((nl = strchr (line, '\n')))
          *nl = '\0';
        handle_event (rq->program, line);
        continue;
      }
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
    else if (strcmp (argv[i], "--program") == 0) {
      if (++i == argc)
        return usage (rq.verb);
      rq.program = argv[i];
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
