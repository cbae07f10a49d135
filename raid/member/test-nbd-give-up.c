/* nbdraid: a command on an NBD member that is given up on (its time
 * ran out) leaves its caller's buffer alone once it returns, though the
 * reply comes later and another thread is driving the connection then.
 *
 * One connection to an nbdkit export whose reads take 600 ms and
 * writes 1200 ms.  A writer issues first and drives
 * the connection, polling its socket for its reply.  Then a read is
 * given 300 ms: it runs out and is left behind on the connection (a
 * heartbeat's read on a slow member), and the test marks its buffer.
 * At once a second read is given 150 ms: it runs out while the first
 * is still out, so it breaks the connection.  The replies arrive from
 * 600 ms on, while the writer would still poll: read into a marked
 * buffer, the caller's again, they would be a use after free in the
 * array (a heartbeat's 4K block, freed; found by ASan in
 * test-parity-writes-out-of-order).  The writer's write must still
 * land, sent again on a new connection.
 *
 * Then a write of 8K (2.4 s) given 300 ms is left behind (a late
 * heartbeat's superblock), and a write of 4K (1.2 s) into it follows
 * at once (the superblock written next).  Sent at once, the second
 * would land first and the late one over it: it must wait, and read
 * back.
 *
 * Needs nbdkit with the eval plugin (exit 77 without).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "member.h"
#include "test-report.h"

#define BLOCK 4096

extern char **environ;

struct writer {
  struct member *m;
  uint8_t buf[BLOCK];
  int r, err;
};

static void *
write_block (void *opaque)
{
  struct writer *w = opaque;

  w->r = w->m->ops->pwrite (w->m, w->buf, BLOCK, BLOCK);
  w->err = errno;
  return NULL;
}

/* A read of 600 ms into buf, given timeout_ms: it must run out.  Then
 * buf is the caller's: mark it. */
static void
given_up (struct member *m, uint8_t *buf, unsigned timeout_ms,
          const char *how)
{
  int r = m->ops->pread_within (m, buf, BLOCK, 0, timeout_ms);

  if (r != -1 || errno != ETIMEDOUT)
    fail ("%s: a read of 600 ms given %u: returned %d (%s), expected "
          "ETIMEDOUT", how, timeout_ms, r,
          r == -1 ? strerror (errno) : "no error");
  memset (buf, 0xaa, BLOCK);
}

/* Nothing wrote into buf since given_up marked it. */
static void
untouched (const uint8_t *buf, const char *how)
{
  unsigned i;

  for (i = 0; i < BLOCK; i++)
    if (buf[i] != 0xaa) {
      fail ("%s: the buffer of a read given up on was written at byte %u "
            "(0x%02x) after the read returned", how, i, buf[i]);
      return;
    }
}

/* Start nbdkit serving dir/disk (1M) on dir/sock, each read taking
 * 600 ms and each write 1200 ms a 4K; its pid, or -1 (and the test skips)
 * if it cannot.  Not the delay filter: a client hanging up on three of
 * its sleeps at once woke them together, and nbdkit 1.32 then died at
 * times replying on the closed socket (connections.c: raw_send_socket:
 * Assertion `sock >= 0' failed). */
static pid_t
start_nbdkit (const char *dir)
{
  char sock[256], pidfile[256], log[256], disk[256], rd[400], wr[400];
  char *argv[] = { "nbdkit", "-f", "-U", sock, "-P", pidfile, "eval",
                   "thread_model=echo parallel", "get_size=echo 1048576",
                   "can_write=exit 0", rd, wr, NULL };
  posix_spawn_file_actions_t fa;
  struct stat st;
  pid_t pid;
  int i, r, fd;

  snprintf (sock, sizeof sock, "%s/sock", dir);
  snprintf (pidfile, sizeof pidfile, "%s/pid", dir);
  snprintf (log, sizeof log, "%s/log", dir);
  snprintf (disk, sizeof disk, "%s/disk", dir);
  snprintf (rd, sizeof rd, "pread=sleep 0.6; dd if=%s skip=$4 count=$3 "
            "iflag=skip_bytes,count_bytes status=none", disk);
  snprintf (wr, sizeof wr, "pwrite=t=$(($3 / 4096 * 12)); "
            "sleep $((t / 10)).$((t %% 10)); dd of=%s seek=$4 "
            "oflag=seek_bytes conv=notrunc status=none", disk);
  fd = open (disk, O_WRONLY | O_CREAT, 0600);
  if (fd == -1 || ftruncate (fd, 1 << 20) == -1) {
    perror (disk);
    exit (1);
  }
  close (fd);
  /* It says which replies found the client gone. */
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 2, log, O_WRONLY | O_CREAT, 0600);
  r = posix_spawnp (&pid, "nbdkit", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy (&fa);
  if (r != 0)
    return -1;
  for (i = 0; i < 100; i++) {
    if (stat (pidfile, &st) == 0 && st.st_size > 0)
      return pid;
    if (waitpid (pid, NULL, WNOHANG) == pid)
      return -1;
    usleep (100000);
  }
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
  return -1;
}

/* A write of 4K into an 8K write left behind lands after it. */
static void
write_over_late (struct member *m)
{
  uint8_t late[2 * BLOCK], next[BLOCK], back[BLOCK];
  int r;

  memset (late, 0x11, sizeof late);
  memset (next, 0x22, sizeof next);
  r = m->ops->pwrite_within (m, late, sizeof late, 2 * BLOCK, 300);
  if (r != -1 || errno != ETIMEDOUT)
    fail ("a write of 2.4 s given 300 ms: returned %d (%s), expected "
          "ETIMEDOUT", r, r == -1 ? strerror (errno) : "no error");
  if (m->ops->pwrite (m, next, BLOCK, 2 * BLOCK) == -1)
    fail ("the write after a late one: %s", strerror (errno));
  sleep (2);                    /* past when the late one would land */
  if (m->ops->pread (m, back, BLOCK, 2 * BLOCK) == -1)
    fail ("read back after a late write: %s", strerror (errno));
  else if (memcmp (back, next, BLOCK) != 0)
    fail ("the late write landed over the one after it (0x%02x)", back[0]);
}

/* Show what nbdkit said, after a failure. */
static void
show_log (const char *dir)
{
  char path[256], line[512];
  FILE *f;

  snprintf (path, sizeof path, "%s/log", dir);
  if (!(f = fopen (path, "r")))
    return;
  while (fgets (line, sizeof line, f))
    printf ("nbdkit: %s", line);
  fclose (f);
}

int
main (void)
{
  char dir[] = "/tmp/nbdraid-give-up.XXXXXX", uri[300], err[256];
  struct member_open_options opts = { .nbd_connections = 1,
                                      .nbd_timeout_s = 10,
                                      .connect_timeout_s = 10 };
  struct writer w;
  uint8_t *left = malloc (BLOCK), *broke = malloc (BLOCK), back[BLOCK];
  pthread_t th;
  pid_t pid;

  if (!left || !broke || !mkdtemp (dir)) {
    perror ("setup");
    return 1;
  }
  pid = start_nbdkit (dir);
  if (pid == -1) {
    printf ("SKIP: nbdkit with the eval plugin would not start\n");
    rmdir (dir);
    return 77;
  }
  snprintf (uri, sizeof uri, "nbd+unix:///?socket=%s/sock", dir);
  w.m = member_nbd_open (uri, &opts, err, sizeof err);
  if (!w.m) {
    fail ("open: %s", err);
    goto out;
  }
  memset (w.buf, 0x5a, BLOCK);
  pthread_create (&th, NULL, write_block, &w);
  usleep (100000);              /* the writer drives the connection */

  given_up (w.m, left, 300, "left behind");
  given_up (w.m, broke, 150, "breaking the connection");
  sleep (1);                    /* their replies came at 600 ms */
  untouched (left, "left behind");
  untouched (broke, "breaking the connection");

  pthread_join (th, NULL);
  if (w.r == -1)
    fail ("the write beside it failed: %s", strerror (w.err));
  if (w.m->ops->pread (w.m, back, BLOCK, BLOCK) == -1)
    fail ("read back: %s", strerror (errno));
  else if (memcmp (back, w.buf, BLOCK) != 0)
    fail ("read back: not what was written");
  write_over_late (w.m);
  member_close (w.m);

 out:
  if (waitpid (pid, NULL, WNOHANG) == pid)
    fail ("nbdkit died");
  if (failures)
    show_log (dir);
  kill (pid, SIGTERM);
  waitpid (pid, NULL, 0);
  snprintf (uri, sizeof uri, "%s/sock", dir);
  unlink (uri);
  snprintf (uri, sizeof uri, "%s/pid", dir);
  unlink (uri);
  snprintf (uri, sizeof uri, "%s/log", dir);
  unlink (uri);
  snprintf (uri, sizeof uri, "%s/disk", dir);
  unlink (uri);
  rmdir (dir);
  free (left);
  free (broke);
  if (failures) {
    printf ("%u failures\n", failures);
    return 1;
  }
  printf ("ok: a command given up on leaves its buffer alone\n");
  return 0;
}
