/* nbdraid: the control loop: admin socket, events, background jobs. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <ev.h>

#include "checks.h"
#include "control.h"

#define MAX_REQUEST 4096
#define QUEUE 64

struct control_client {
  struct control *c;
  ev_io w;
  int fd;
  char buf[MAX_REQUEST];
  size_t len;
  bool monitor;
  bool waiter;                  /* answered when no job runs */
  struct control_client *next;
};

struct pending {
  enum raid_event event;
  char array[33];
  char member[256];
  char detail[256];
};

struct control {
  struct raid_config *cfg;
  struct raid_array *a;
  struct checks *checks;        /* positions and schedule of checks */
  const struct control_server *server;  /* NULL: stop, reload refused */
  char path[sizeof ((struct sockaddr_un *) 0)->sun_path];
  int listen_fd;
  pid_t listener;               /* the process that created the socket */
  struct ev_loop *loop;
  ev_io accept_w;
  ev_timer accept_pause_w;      /* out of files: accept again later */
  ev_async wake_w;
  ev_timer job_w;
  ev_timer sample_w;
  ev_timer maintenance_w;
  pthread_t thread;
  bool running;
  pthread_mutex_t lock;         /* the queue and stopping */
  struct pending queue[QUEUE];
  unsigned head, count;
  bool stopping;
  bool halted;                  /* its loop ran, and was stopped */
  struct control_client *clients;
  uint64_t speed_min, speed_max;
  uint64_t client_bytes;        /* at the last tick */
  ev_tstamp client_seen;        /* when client I/O was last seen */
  ev_tstamp speed_at;           /* job speed sampling */
  uint64_t speed_done, speed;
};

struct control *
control_new (struct raid_config *cfg)
{
  struct control *c = calloc (1, sizeof *c);

  if (!c)
    return NULL;
  c->cfg = cfg;
  c->listen_fd = -1;
  c->speed_min = cfg->speed_min;
  c->speed_max = cfg->speed_max;
  pthread_mutex_init (&c->lock, NULL);
  raid_config_socket_path (cfg, c->path, sizeof c->path);
  return c;
}

void
control_event (void *opaque, enum raid_event event, const char *array,
               const char *member, const char *detail)
{
  struct control *c = opaque;
  struct pending *p;

  if (!c)
    return;
  pthread_mutex_lock (&c->lock);
  if (c->count == QUEUE) {      /* drop the oldest */
    c->head = (c->head + 1) % QUEUE;
    c->count--;
  }
  p = &c->queue[(c->head + c->count++) % QUEUE];
  p->event = event;
  snprintf (p->array, sizeof p->array, "%s", array);
  snprintf (p->member, sizeof p->member, "%s", member);
  snprintf (p->detail, sizeof p->detail, "%s", detail);
  pthread_mutex_unlock (&c->lock);
  if (c->running)
    ev_async_send (c->loop, &c->wake_w);
}

/* Read what the client has sent but we will not use, so closing sends
 * it a clean end rather than a reset that could lose our answer. */
static void
drain (int fd)
{
  char junk[4096];

  while (recv (fd, junk, sizeof junk, MSG_DONTWAIT) > 0)
    ;
}

/* Drop a client: stop watching it, close its socket, free it. */
static void
close_client (struct control *c, struct control_client *cl)
{
  struct control_client **pp;

  for (pp = &c->clients; *pp; pp = &(*pp)->next)
    if (*pp == cl) {
      *pp = cl->next;
      break;
    }
  ev_io_stop (c->loop, &cl->w);
  close (cl->fd);
  free (cl);
}

/* Make cl a monitor: it gets an EVENT line for each event to come. */
void
control_subscribe (struct control *c, struct control_client *cl)
{
  cl->monitor = true;
}

void
control_wait (struct control *c, struct control_client *cl)
{
  cl->waiter = true;
  control_kick (c);             /* its step says at once if all is idle */
}

/* Nothing runs: answer every wait. */
static void
release_waiters (struct control *c)
{
  struct control_client *cl, *next;

  for (cl = c->clients; cl; cl = next) {
    next = cl->next;
    if (cl->waiter) {
      send (cl->fd, "OK\n", 3, MSG_DONTWAIT | MSG_NOSIGNAL);
      close_client (c, cl);
    }
  }
}

/* One event line to every monitor: EVENT NAME ARRAY MEMBER DETAIL. */
static void
broadcast (struct control *c, const struct pending *p)
{
  struct control_client *cl, *next;
  char line[1024];
  int n;

  n = snprintf (line, sizeof line, "EVENT\t%s\t%s\t%s\t%s\n",
                raid_event_name (p->event), p->array, p->member, p->detail);
  for (cl = c->clients; cl; cl = next) {
    next = cl->next;
    if (cl->monitor &&
        send (cl->fd, line, (size_t) n, MSG_DONTWAIT | MSG_NOSIGNAL) != n)
      close_client (c, cl);     /* gone, or too slow to keep up */
  }
}

/* Run the job step at once instead of at its next tick. */
void
control_kick (struct control *c)
{
  ev_timer_stop (c->loop, &c->job_w);
  ev_timer_set (&c->job_w, 0, 0);
  ev_timer_start (c->loop, &c->job_w);
}

/* On the loop thread: send the queued events to the monitors, or stop
 * the loop when control_free asks. */
static void
wake_cb (struct ev_loop *loop, ev_async *w, int revents)
{
  struct control *c = w->data;
  struct pending p;

  for (;;) {
    pthread_mutex_lock (&c->lock);
    if (c->stopping) {
      pthread_mutex_unlock (&c->lock);
      ev_break (loop, EVBREAK_ALL);
      return;
    }
    if (c->count == 0) {
      pthread_mutex_unlock (&c->lock);
      break;
    }
    p = c->queue[c->head];
    c->head = (c->head + 1) % QUEUE;
    c->count--;
    pthread_mutex_unlock (&c->lock);
    broadcast (c, &p);
  }
  control_kick (c);             /* a failure may want a spare now */
}

/* md's sync_speed_min/max: at most max (0: no limit) while clients are
 * quiet, at min while they are busy. */
static void
job_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
  struct control *c = w->data;
  ev_tstamp now = ev_time (), took;
  uint64_t seen = raid_client_bytes (c->a), rate, budget;
  int r;

  if (seen != c->client_bytes) {
    c->client_bytes = seen;
    c->client_seen = now;
  }
  rate = now - c->client_seen < 1.0 ? c->speed_min : c->speed_max;
  if (c->speed_max && rate > c->speed_max)
    rate = c->speed_max;        /* the max bounds the min too */
  /* A tenth of a second's worth, but no more than a step does: the
   * pause after it is computed from what was asked for. */
  budget = rate ? rate / 10 : RAID_JOB_STEP_MAX;
  if (budget < 64 * 1024)
    budget = 64 * 1024;
  if (budget > RAID_JOB_STEP_MAX)
    budget = RAID_JOB_STEP_MAX;
  r = raid_job_step (c->a, budget);
  if (r == 0)
    release_waiters (c);
  took = ev_time () - now;
  ev_timer_set (w, r != 1 ? 0.25
                : rate && (double) budget / rate > took
                ? (double) budget / rate - took : 0, 0);
  ev_timer_start (loop, w);
}

uint64_t
control_job_speed (struct control *c)
{
  return c->speed;
}

/* The speed limits, bytes per second (max 0: no limit). */
void
control_speed (struct control *c, uint64_t *min, uint64_t *max)
{
  *min = c->speed_min;
  *max = c->speed_max;
}

/* Set the speed limits, bytes per second, and apply them at once. */
void
control_set_speed (struct control *c, uint64_t min, uint64_t max)
{
  c->speed_min = min;
  c->speed_max = max;
  control_kick (c);
}

/* Every second: the array's housekeeping (raid_maintenance), the
 * checks' (checks_tick) and the server's across its arrays. */
static void
maintenance_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
  struct control *c = w->data;

  raid_maintenance (c->a);
  checks_tick (c->checks);
  if (c->server && c->server->tick)
    c->server->tick (c, c->a, c->cfg);
  control_kick (c);             /* a re-added member wants its rebuild */
}

/* Progress speed over the last few seconds, for status. */
static void
sample_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
  struct control *c = w->data;
  uint64_t done, total;
  enum raid_job_kind kind;
  ev_tstamp now = ev_time ();

  raid_job_progress (c->a, &kind, &done, &total);
  if (kind != RAID_JOB_NONE && done >= c->speed_done && now > c->speed_at)
    c->speed = (uint64_t) ((done - c->speed_done) / (now - c->speed_at));
  else
    c->speed = 0;
  c->speed_done = done;
  c->speed_at = now;
}

/* Read a client's request up to its newline and run it; a monitor or
 * waiter sends nothing more, and is closed when it hangs up. */
static void
client_cb (struct ev_loop *loop, ev_io *w, int revents)
{
  struct control_client *cl = w->data;
  struct control *c = cl->c;
  char *nl;
  ssize_t n;

  n = read (cl->fd, cl->buf + cl->len, sizeof cl->buf - 1 - cl->len);
  if (n <= 0) {
    if (n == -1 && (errno == EAGAIN || errno == EINTR))
      return;
    close_client (c, cl);
    return;
  }
  if (cl->monitor || cl->waiter)        /* they only listen */
    return;
  cl->len += (size_t) n;
  cl->buf[cl->len] = '\0';
  nl = memchr (cl->buf, '\n', cl->len);
  if (memchr (cl->buf, '\0', nl ? (size_t) (nl - cl->buf) : cl->len)) {
    dprintf (cl->fd, "ERR malformed request (a NUL byte)\n");
    drain (cl->fd);
    close_client (c, cl);
    return;
  }
  if (!nl) {
    if (cl->len == sizeof cl->buf - 1) {
      dprintf (cl->fd, "ERR command longer than %d bytes\n", MAX_REQUEST);
      drain (cl->fd);
      close_client (c, cl);
    }
    return;
  }
  *nl = '\0';
  if (control_command (c, c->a, c->cfg, cl, cl->fd, cl->buf))
    return;
  close_client (c, cl);
}

/* Only the server's own user (and root) may steer it. */
static bool
allowed (int fd)
{
  struct ucred cred;
  socklen_t len = sizeof cred;

  return getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
    (cred.uid == 0 || cred.uid == geteuid ());
}

/* A refused peer holds nothing: answered and closed at once, so no
 * number of them can use up the server's files.  Its request, if
 * already there, is read first: closing on unread data would reset the
 * connection and lose the answer. */
static void
refuse_peer (struct control *c, int fd)
{
  char scratch[MAX_REQUEST];
  int i;

  for (i = 0;                   /* bounded: a peer may keep sending */
       i < 4 && recv (fd, scratch, sizeof scratch, MSG_DONTWAIT) > 0; i++)
    ;
  if (geteuid () == 0)
    dprintf (fd, "ERR permission denied: only root may control array %s\n",
             c->cfg->name);
  else
    dprintf (fd, "ERR permission denied: only uid %u or root may control "
             "array %s\n", (unsigned) geteuid (), c->cfg->name);
  close (fd);
}

/* After a pause for want of files: accept connections again. */
static void
accept_resume_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
  struct control *c = w->data;

  ev_io_start (loop, &c->accept_w);
}

/* Accept a connection: a peer that is neither our user nor root is
 * refused at once, others become clients. */
static void
accept_cb (struct ev_loop *loop, ev_io *w, int revents)
{
  struct control *c = w->data;
  struct control_client *cl;
  struct timeval tv = { .tv_sec = 5 };
  int fd = accept4 (c->listen_fd, NULL, NULL, SOCK_CLOEXEC);

  if (fd == -1) {
    /* Out of files, the connection stays queued and the watcher would
     * fire at once again: pause instead of spinning. */
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
        errno == ENOMEM) {
      ev_io_stop (loop, &c->accept_w);
      ev_timer_start (loop, &c->accept_pause_w);
    }
    return;
  }
  if (!allowed (fd)) {
    refuse_peer (c, fd);
    return;
  }
  /* A client that stops reading cannot stall the loop for long. */
  setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  cl = calloc (1, sizeof *cl);
  if (!cl) {
    close (fd);
    return;
  }
  cl->c = c;
  cl->fd = fd;
  cl->next = c->clients;
  c->clients = cl;
  ev_io_init (&cl->w, client_cb, fd, EV_READ);
  cl->w.data = cl;
  ev_io_start (loop, &cl->w);
}

/* The socket's directory must be ours or root's, and others must not
 * be able to move our socket aside and listen in its place: not
 * writable by them unless sticky (as /tmp is). */
static int
check_directory (const char *dir, char *err, size_t errlen)
{
  struct stat st;

  if (stat (dir, &st) == -1) {
    snprintf (err, errlen, "control socket directory %s: %s", dir,
              strerror (errno));
    return -1;
  }
  if (st.st_uid != 0 && st.st_uid != geteuid ()) {
    snprintf (err, errlen, "control socket directory %s belongs to uid %u, "
              "not to this server's user; remove it or set socket = in the "
              "config", dir, (unsigned) st.st_uid);
    return -1;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
    snprintf (err, errlen, "control socket directory %s is writable by "
              "others (mode %04o); make it 0700 or sticky", dir,
              (unsigned) (st.st_mode & 07777));
    return -1;
  }
  return 0;
}

/* Create the socket 0600; refuse if a live server holds the path. */
static int
listen_on (struct control *c, char *err, size_t errlen)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  char dir[sizeof c->path];
  const char *parent;
  struct stat st;
  int fd;

  snprintf (dir, sizeof dir, "%s", c->path);
  parent = dirname (dir);
  mkdir (parent, 0700);         /* /run/nbdraid and the like */
  if (check_directory (parent, err, errlen) == -1)
    return -1;
  snprintf (addr.sun_path, sizeof addr.sun_path, "%s", c->path);
  if (lstat (c->path, &st) == 0) {
    if (!S_ISSOCK (st.st_mode)) {
      snprintf (err, errlen, "control socket %s exists and is not a socket",
                c->path);
      return -1;
    }
    fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect (fd, (struct sockaddr *) &addr, sizeof addr) == 0) {
      close (fd);
      snprintf (err, errlen, "control socket %s: another server is "
                "serving it", c->path);
      return -1;
    }
    if (fd >= 0)
      close (fd);
    unlink (c->path);           /* left by a server that died */
  }
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd == -1 || bind (fd, (struct sockaddr *) &addr, sizeof addr) == -1 ||
      chmod (c->path, 0600) == -1 || listen (fd, 16) == -1) {
    snprintf (err, errlen, "control socket %s: %s", c->path,
              strerror (errno));
    if (fd >= 0)
      close (fd);
    return -1;
  }
  c->listen_fd = fd;
  return 0;
}

/* The control thread: the loop, until control_free stops it. */
static void *
run (void *arg)
{
  struct control *c = arg;

  ev_run (c->loop, 0);
  return NULL;
}

int
control_listen (struct control *c, char *err, size_t errlen)
{
  if (listen_on (c, err, errlen) == -1)
    return -1;
  c->listener = getpid ();
  return 0;
}

int
control_start (struct control *c, struct raid_array *a, char *err,
               size_t errlen)
{
  int r;

  c->a = a;
  c->checks = checks_new (a, c->cfg);
  c->loop = ev_loop_new (EVFLAG_AUTO | EVFLAG_NOSIGMASK);
  if (!c->checks || !c->loop) {
    snprintf (err, errlen, "cannot create the event loop");
    return -1;
  }
  ev_io_init (&c->accept_w, accept_cb, c->listen_fd, EV_READ);
  c->accept_w.data = c;
  ev_io_start (c->loop, &c->accept_w);
  ev_timer_init (&c->accept_pause_w, accept_resume_cb, 0.1, 0);
  c->accept_pause_w.data = c;
  ev_async_init (&c->wake_w, wake_cb);
  c->wake_w.data = c;
  ev_async_start (c->loop, &c->wake_w);
  ev_timer_init (&c->job_w, job_cb, 0, 0);
  c->job_w.data = c;
  ev_timer_start (c->loop, &c->job_w);
  ev_timer_init (&c->maintenance_w, maintenance_cb, 1, 1);
  c->maintenance_w.data = c;
  ev_timer_start (c->loop, &c->maintenance_w);
  ev_timer_init (&c->sample_w, sample_cb, 2, 2);
  c->sample_w.data = c;
  ev_timer_start (c->loop, &c->sample_w);
  c->running = true;
  r = pthread_create (&c->thread, NULL, run, c);
  if (r != 0) {
    c->running = false;
    snprintf (err, errlen, "control thread: %s", strerror (r));
    return -1;
  }
  return 0;
}

void
control_halt (struct control *c)
{
  if (!c || !c->running)
    return;
  pthread_mutex_lock (&c->lock);
  c->stopping = true;
  pthread_mutex_unlock (&c->lock);
  ev_async_send (c->loop, &c->wake_w);
  pthread_join (c->thread, NULL);
  while (c->clients)
    close_client (c, c->clients);
  c->running = false;
  c->halted = true;
}

void
control_free (struct control *c)
{
  if (!c)
    return;
  control_halt (c);
  if (c->loop)
    ev_loop_destroy (c->loop);
  if (c->listen_fd >= 0) {
    close (c->listen_fd);
    /* Not in the parent nbdkit leaves when it goes to the background:
     * the socket is the server's, in the child. */
    if (c->halted || getpid () == c->listener)
      unlink (c->path);
  }
  checks_free (c->checks);
  pthread_mutex_destroy (&c->lock);
  free (c);
}

struct checks *
control_checks (struct control *c)
{
  return c->checks;
}

void
control_set_server (struct control *c, const struct control_server *server)
{
  c->server = server;
}

const struct control_server *
control_server (struct control *c)
{
  return c->server;
}
