/* nbdraid: test device-lock.c.  Within a process, opens of one file
 * share one hold (a reader and a writer do not refuse each other);
 * across processes a writer excludes every other writer and reader,
 * readers share, and the hold goes with the last drop. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device-lock.h"
#include "test-report.h"

static char path[] = "/tmp/nbdraid-test-lock-XXXXXX";
static const char *self;        /* argv[0], run again as the other process */
static uint64_t id[2];

/* The other process: this program run again (a forked child would
 * share our holds), told to take path for writing or reading; exits 0
 * if it could, 1 if refused with a message naming the file and why, 2
 * otherwise. */
static int
other_process (const char *file, const char *mode)
{
  char err[256] = "";
  struct stat st;
  int fd;

  if (stat (file, &st) == -1)
    return 2;
  id[0] = st.st_dev;
  id[1] = st.st_ino;
  fd = open (file, O_RDONLY);
  if (device_lock_take (file, fd, id, false, mode[0] == 'w', err,
                        sizeof err) == 0)
    return 0;
  return strstr (err, file) && strstr (err, "in use") ? 1 : 2;
}

static int
run_other (bool write)
{
  pid_t pid = fork ();
  int status;

  if (pid == 0) {
    execl (self, self, path,
           write ? "write" : "read", (char *) NULL);
    _exit (3);
  }
  waitpid (pid, &status, 0);
  return WIFEXITED (status) ? WEXITSTATUS (status) : 3;
}

/* Whether another process may take the file for writing (or reading). */
static bool
other_may (bool write)
{
  int r = run_other (write);

  if (r > 1)
    fail ("the other process failed (%d)", r);
  return r == 0;
}

int
main (int argc, char **argv)
{
  char err[256];
  struct stat st;
  int fd;

  if (argc == 3)
    return other_process (argv[1], argv[2]);
  self = argv[0];
  fd = mkstemp (path);

  if (fd == -1 || fstat (fd, &st) == -1) {
    perror (path);
    return 1;
  }
  id[0] = st.st_dev;
  id[1] = st.st_ino;

  if (!other_may (true))
    fail ("a free file could not be taken for writing");
  if (device_lock_take (path, fd, id, false, false, err, sizeof err) == -1)
    fail ("read hold: %s", err);
  if (!other_may (false) || other_may (true))
    fail ("with a reader here: others may not read, or may write");
  if (device_lock_take (path, fd, id, false, true, err, sizeof err) == -1)
    fail ("a writer beside our own reader was refused: %s", err);
  if (device_lock_take (path, fd, id, false, true, err, sizeof err) == -1)
    fail ("a second writer of ours was refused: %s", err);
  if (other_may (false) || other_may (true))
    fail ("with writers here, another process got a hold");
  device_lock_drop (id, true);
  if (other_may (false))
    fail ("one writer of ours is left, yet another process may read");
  device_lock_drop (id, true);
  if (!other_may (false) || other_may (true))
    fail ("back to our reader alone: others may not read, or may write");
  device_lock_drop (id, false);
  if (!other_may (true))
    fail ("the last drop kept the file held");
  /* The refusal names the file and why. */
  if (device_lock_take (path, fd, id, false, true, err, sizeof err) == -1)
    fail ("retake: %s", err);
  if (run_other (true) != 1)
    fail ("the refusal does not name the file and why");
  device_lock_drop (id, true);
  close (fd);
  unlink (path);
  if (failures) {
    printf ("%u failures\n", failures);
    return 1;
  }
  printf ("device locks: ok\n");
  return 0;
}
