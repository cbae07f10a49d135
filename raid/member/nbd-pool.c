/* nbdraid: a pool of connections to one NBD server.
 *
 * A pool holds a few connections, and each connection carries many
 * commands at once: a thread issues its command with libnbd's
 * asynchronous API on the least busy connection and waits for its
 * reply.  One of the threads waiting on a connection drives it (polls
 * its socket and lets libnbd read replies and send queued requests);
 * the others sleep until a round of that makes progress, and one of
 * them takes over when the driver's own command is done.  nbd_poll
 * cannot be that driver: it holds the handle's lock while it sleeps,
 * which would keep every other thread from issuing a command, so the
 * driver polls the socket itself, with an eventfd that issuing threads
 * ring when they queue output.
 *
 * A connection that breaks (the server restarted, a link flapped, a
 * command went past its deadline) is closed once the last
 * command on it has given up, and connected again, with backoff, by
 * the next command that needs it; the command is sent again (all ours
 * can be repeated) until its deadline.  After that it fails, and the
 * array fails the member and runs on without it.
 *
 * A command given up on is still libnbd's until the handle is closed:
 * its reply, if it comes, would be read into the caller's buffer, and
 * the rest of a write sent from it, long after the caller freed it.
 * So nobody moves bytes on a broken connection, and a command given up
 * on returns only once no thread is inside libnbd on it any more.
 *
 * A command that may be left behind (one given less than the request
 * timeout: the heartbeat's superblock reads and writes, one interval
 * each) works on a copy of the caller's buffer, and is left behind when
 * its time runs out: the server is slow, not gone.  Breaking the
 * connection instead would send every command on it again, to a server
 * already behind: on a loaded host, each beat that ran out added to the
 * load that made the next one run out.  One command left behind per
 * connection: a second that runs out there breaks it.  NBD does not
 * order writes in flight, so a write that overlaps one left behind
 * waits for it: a superblock written after a late beat must not be
 * overwritten by the beat's older copy.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <libnbd.h>

#include "clock.h"
#include "nbd-connect.h"
#include "nbd-pool.h"

/* The longest the driver polls before looking at its deadline. */
#define DRIVE_MS 1000

/* One command's wait.  libnbd's completion callback marks it done; it
 * is freed by whichever lets go last, the waiter or libnbd (which
 * holds it until the command is retired or the handle closed, even
 * after a waiter gave up on it). */
struct pending {
  pthread_cond_t wake;          /* done, driving handed over, or broken */
  bool done;
  int error;
  unsigned refs;
  pthread_mutex_t *lock;        /* the pool's */
  struct nbd_pool_extent extent; /* block status */
  void *own;                    /* its own copy of the caller's buffer */
  struct conn *left_on;         /* left behind on it, counted there */
  enum nbd_pool_cmd cmd;
  uint64_t off, len;
  struct nbd_pool *pool;
  struct pending *next;         /* the connection's waiters */
  struct pending *next_behind;  /* the pool's writes left behind */
};

struct conn {
  struct nbd_handle *h;         /* NULL: not connected */
  unsigned users;               /* commands on it, or the one connecting */
  bool broken;                  /* take no more: the last user closes it */
  bool driving;                 /* a waiter is polling its socket */
  unsigned inside;              /* threads in a libnbd call that moves
                                 * bytes: the driver, issuers */
  unsigned left;                /* commands left behind on it */
  struct pending *waiters;
  int ring;                     /* eventfd: output queued for the driver */
};

struct nbd_pool {
  pthread_mutex_t lock;         /* guards conns and pendings */
  pthread_cond_t changed;       /* a connection was given back, or a
                                 * write left behind ended */
  struct conn *conns;
  unsigned nconns;
  bool stopping;                /* the server stops: connect once */
  char *uri;
  struct member_open_options opts;
  void (*reconnected) (void *);  /* told of each connection made again */
  void *opaque;
  struct pending *behind;       /* writes left behind, still out */
};

/* Conditions wait on the monotonic clock, like the deadlines. */
static void
cond_init_monotonic (pthread_cond_t *cond)
{
  pthread_condattr_t attr;

  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (cond, &attr);
  pthread_condattr_destroy (&attr);
}

/* Wake every waiter on c, to see that it broke.  Lock held. */
static void
wake_all (struct conn *c)
{
  struct pending *p;

  for (p = c->waiters; p; p = p->next)
    pthread_cond_signal (&p->wake);
}

/* Choose a connection for one command: an idle connected one, else an
 * unconnected one for the caller to connect, else the connected one
 * carrying the fewest commands. */
static struct conn *
borrow (struct nbd_pool *pool)
{
  struct conn *busy, *unconnected, *c;
  unsigned i;

  pthread_mutex_lock (&pool->lock);
  for (;;) {
    busy = unconnected = NULL;
    for (i = 0; i < pool->nconns; i++) {
      c = &pool->conns[i];
      if (c->h && !c->broken) {
        if (c->users == 0)
          goto out;
        if (!busy || c->users < busy->users)
          busy = c;
      }
      else if (!c->h && c->users == 0)
        unconnected = c;
    }
    c = unconnected ? unconnected : busy;
    if (c)
      goto out;
    pthread_cond_wait (&pool->changed, &pool->lock);
  }
 out:
  c->users++;
  pthread_mutex_unlock (&pool->lock);
  return c;
}

/* Done with c; it broke if `broken`.  The last user of a broken
 * connection closes it, leaving the slot to connect again. */
static void
give_back (struct nbd_pool *pool, struct conn *c, bool broken)
{
  struct nbd_handle *dead = NULL;
  int saved = errno;

  pthread_mutex_lock (&pool->lock);
  c->broken |= broken;
  c->users--;
  if (c->broken && c->users == 0) {
    dead = c->h;
    c->h = NULL;
    c->broken = false;
  }
  if (c->broken)
    wake_all (c);
  pthread_cond_broadcast (&pool->changed);
  pthread_mutex_unlock (&pool->lock);
  if (dead)
    nbd_close (dead);
  errno = saved;
}

/* Connect c again before the deadline, backing off between tries
 * (100 ms, doubling to 1 s); once only when the server is stopping. */
static int
reconnect (struct nbd_pool *pool, struct conn *c, int64_t deadline)
{
  int64_t backoff = 100, left;
  char err[256];
  struct nbd_handle *h;

  for (;;) {
    h = member_nbd_connect_one (pool->uri, &pool->opts, deadline, err,
                                sizeof err);
    if (h) {
      pthread_mutex_lock (&pool->lock);
      c->h = h;
      pthread_mutex_unlock (&pool->lock);
      pool->reconnected (pool->opaque);
      return 0;
    }
    left = deadline - (int64_t) now_ms ();
    if (left <= 0 || __atomic_load_n (&pool->stopping, __ATOMIC_RELAXED)) {
      errno = ENOTCONN;
      return -1;
    }
    nanosleep (&(struct timespec) {
      .tv_sec = (backoff < left ? backoff : left) / 1000,
      .tv_nsec = (backoff < left ? backoff : left) % 1000 * 1000000 }, NULL);
    backoff = backoff < 500 ? backoff * 2 : 1000;
  }
}

/* One round of driving c: wait up to timeout_ms for its socket to be
 * ready for what libnbd wants next (a reply to read, a request to
 * send) or for a ring, and let libnbd go on.  0, or -1 if the
 * connection failed. */
static int
drive (struct conn *c, int timeout_ms)
{
  unsigned dir = nbd_aio_get_direction (c->h);
  struct pollfd fds[2] = {
    { .fd = nbd_aio_get_fd (c->h),
      .events = (dir & LIBNBD_AIO_DIRECTION_READ ? POLLIN : 0) |
                (dir & LIBNBD_AIO_DIRECTION_WRITE ? POLLOUT : 0) },
    { .fd = c->ring, .events = POLLIN },
  };
  uint64_t rings;

  if (fds[0].fd == -1)
    return -1;
  if (poll (fds, 2, timeout_ms) == -1)
    return errno == EINTR ? 0 : -1;
  if (fds[1].revents & POLLIN &&
      read (c->ring, &rings, sizeof rings) == -1 && errno != EAGAIN)
    return -1;
  if (fds[0].revents & (POLLIN | POLLHUP))
    return nbd_aio_notify_read (c->h);
  if (fds[0].revents & POLLOUT)
    return nbd_aio_notify_write (c->h);
  if (fds[0].revents & (POLLERR | POLLNVAL))
    return -1;
  return 0;
}

/* Wait on cond until it is signalled or the deadline (monotonic, in ms)
 * passes. */
static void
wait_until (pthread_cond_t *cond, pthread_mutex_t *lock, int64_t deadline)
{
  struct timespec ts = { .tv_sec = deadline / 1000,
                         .tv_nsec = deadline % 1000 * 1000000 };

  pthread_cond_timedwait (cond, lock, &ts);
}

/* A thread leaves libnbd's calls on c; the last to leave a broken
 * connection wakes those waiting to give up.  Lock held. */
static void
leave_libnbd (struct conn *c)
{
  c->inside--;
  if (c->broken && c->inside == 0)
    wake_all (c);
}

/* Give up on p's command on c, breaking c: the reply may still come,
 * and nobody must read it.  Returns once no thread moves bytes on c
 * (a driver polling it is rung out of its poll), so that p's buffer is
 * the caller's again.  Lock held. */
static void
give_up (struct nbd_pool *pool, struct conn *c, struct pending *p)
{
  if (!c->broken) {
    c->broken = true;
    wake_all (c);
  }
  if (c->driving)
    eventfd_write (c->ring, 1);
  while (c->inside)
    pthread_cond_wait (&p->wake, &pool->lock);
}

/* Wait for p's command on c until the deadline, driving c while nobody
 * else does.  0, or -1 with errno (and *broken if c is no good any
 * more).  Called and returns with the lock held. */
static int
await (struct nbd_pool *pool, struct conn *c, struct pending *p,
       int64_t deadline, bool *broken)
{
  for (;;) {
    int64_t left = deadline - (int64_t) now_ms ();
    int r;

    if (p->done) {
      errno = p->error;
      return p->error ? -1 : 0;
    }
    if (c->broken || left <= 0) {
      errno = c->broken ? ENOTCONN : ETIMEDOUT;
      if (!c->broken && p->own && c->left == 0) {
        p->left_on = c;         /* its reply lands in p->own */
        c->left++;
        if (p->cmd == NBD_POOL_WRITE) {
          p->next_behind = pool->behind;
          pool->behind = p;
        }
        return -1;
      }
      *broken = true;
      give_up (pool, c, p);
      return -1;
    }
    if (c->driving) {
      wait_until (&p->wake, &pool->lock, deadline);
      continue;
    }
    c->driving = true;
    c->inside++;
    pthread_mutex_unlock (&pool->lock);
    r = drive (c, (int) (left < DRIVE_MS ? left : DRIVE_MS));
    pthread_mutex_lock (&pool->lock);
    c->driving = false;
    if (r == -1 && !c->broken) {
      c->broken = true;
      wake_all (c);
    }
    leave_libnbd (c);
  }
}

/* Lock held. */
static void
let_go (struct pending *p)
{
  struct pending **b;

  if (--p->refs == 0) {
    if (p->left_on)
      p->left_on->left--;
    for (b = &p->pool->behind; *b; b = &(*b)->next_behind)
      if (*b == p) {
        *b = p->next_behind;
        pthread_cond_broadcast (&p->pool->changed);
        break;
      }
    pthread_cond_destroy (&p->wake);
    free (p->own);
    free (p);
  }
}

/* libnbd's completion callback. */
static int
command_done (void *user_data, int *error)
{
  struct pending *p = user_data;

  pthread_mutex_lock (p->lock);
  p->done = true;
  p->error = *error;
  pthread_cond_signal (&p->wake);
  pthread_mutex_unlock (p->lock);
  return 1;                     /* retire it: nobody asks for the cookie */
}

/* libnbd's block status callback: keep the first extent of the one
 * context we asked for (pairs of length and flags). */
static int
extent_seen (void *user_data, const char *metacontext, uint64_t offset,
             uint32_t *entries, size_t nr_entries, int *error)
{
  struct pending *p = user_data;

  if (!p->extent.got && nr_entries >= 2 && !*error)
    p->extent = (struct nbd_pool_extent) {
      .got = true, .len = entries[0], .flags = entries[1] };
  return 0;
}

/* libnbd's free callback: it holds p no more. */
static void
command_freed (void *user_data)
{
  struct pending *p = user_data;
  pthread_mutex_t *lock = p->lock;

  pthread_mutex_lock (lock);
  let_go (p);
  pthread_mutex_unlock (lock);
}

/* Leave c's waiters; a driver leaving hands driving to the next. */
static void
stop_waiting (struct conn *c, struct pending *p)
{
  struct pending **pp = &c->waiters;

  while (*pp != p)
    pp = &(*pp)->next;
  *pp = p->next;
  if (!c->driving && c->waiters)
    pthread_cond_signal (&c->waiters->wake);
  let_go (p);
}

/* Start cmd on h without waiting; p hears of its reply.  Returns
 * libnbd's cookie, or -1 if it would not start it. */
static int64_t
start (struct nbd_handle *h, enum nbd_pool_cmd cmd, void *buf, uint64_t len,
       uint64_t off, struct pending *p)
{
  nbd_completion_callback cb = { .callback = command_done, .user_data = p,
                                 .free = command_freed };

  switch (cmd) {
  case NBD_POOL_READ:
    return nbd_aio_pread (h, buf, len, off, cb, 0);
  case NBD_POOL_WRITE:
    return nbd_aio_pwrite (h, buf, len, off, cb, 0);
  case NBD_POOL_ZERO:
    return nbd_aio_zero (h, len, off, cb, 0);
  case NBD_POOL_FLUSH:
    return nbd_aio_flush (h, cb, 0);
  case NBD_POOL_STATUS:
    return nbd_aio_block_status (h, len, off, (nbd_extent_callback) {
        .callback = extent_seen, .user_data = p }, cb, 0);
  }
  abort ();
}

/* Issue one command on c and wait for it; on a copy of buf if it may
 * be left behind. */
static int
issue (struct nbd_pool *pool, struct conn *c, enum nbd_pool_cmd cmd, void *buf,
       uint64_t len, uint64_t off, int64_t deadline, bool may_leave,
       bool *broken)
{
  struct pending *p = calloc (1, sizeof *p);
  bool output;
  int r, saved;

  if (!p)
    return -1;
  if (may_leave && (cmd == NBD_POOL_READ || cmd == NBD_POOL_WRITE)) {
    if (!(p->own = malloc (len))) {
      free (p);
      return -1;
    }
    if (cmd == NBD_POOL_WRITE)
      memcpy (p->own, buf, len);
  }
  cond_init_monotonic (&p->wake);
  p->refs = 2;                  /* ours, and libnbd's until it frees it */
  p->lock = &pool->lock;
  p->pool = pool;
  p->cmd = cmd;
  p->off = off;
  p->len = len;
  pthread_mutex_lock (&pool->lock);
  if (c->broken) {              /* broke since it was borrowed */
    pthread_mutex_unlock (&pool->lock);
    pthread_cond_destroy (&p->wake);
    free (p->own);
    free (p);
    errno = ENOTCONN;
    *broken = true;
    return -1;
  }
  p->next = c->waiters;
  c->waiters = p;
  c->inside++;                  /* issuing sends queued commands too */
  pthread_mutex_unlock (&pool->lock);

  if (start (c->h, cmd, p->own ? p->own : buf, len, off, p) == -1) {
    errno = nbd_get_errno () ? nbd_get_errno () : EIO;
    r = -1;
    pthread_mutex_lock (&pool->lock);
    leave_libnbd (c);
  }
  else {
    /* libnbd sent what the socket took; a driver polling only for
     * replies must learn that the rest waits to be written. */
    output = nbd_aio_get_direction (c->h) & LIBNBD_AIO_DIRECTION_WRITE;
    pthread_mutex_lock (&pool->lock);
    leave_libnbd (c);
    if (output && c->driving)
      eventfd_write (c->ring, 1);
    r = await (pool, c, p, deadline, broken);
    if (r == 0 && cmd == NBD_POOL_STATUS)
      *(struct nbd_pool_extent *) buf = p->extent;
    if (r == 0 && cmd == NBD_POOL_READ && p->own)
      memcpy (buf, p->own, len);
  }
  saved = errno;
  stop_waiting (c, p);
  pthread_mutex_unlock (&pool->lock);
  /* NBD_ESHUTDOWN: the server is going down and wants its clients to
   * hang up; the command may go again, to the server it restarts as. */
  if (r == -1 && !*broken)
    *broken = saved == ESHUTDOWN || nbd_aio_is_dead (c->h) == 1
              || nbd_aio_is_closed (c->h) == 1;
  errno = saved;
  return r;
}

/* A write left behind that overlaps [off, off + len), or NULL.  Lock
 * held. */
static struct pending *
behind_over (const struct nbd_pool *pool, uint64_t off, uint64_t len)
{
  struct pending *p;

  for (p = pool->behind; p; p = p->next_behind)
    if (p->off < off + len && off < p->off + p->len)
      return p;
  return NULL;
}

/* Wait, until the deadline, for the writes left behind that overlap
 * [off, off + len) to end, as their callers would have: nobody else
 * drives a connection whose only command was left behind.  0, or -1
 * with errno ETIMEDOUT (one did not end in time; its connection broke
 * as a second command running out there does). */
static int
after_behind (struct nbd_pool *pool, uint64_t off, uint64_t len,
              int64_t deadline)
{
  struct pending *p;
  struct conn *c;
  bool broken;
  int r = 0;

  pthread_mutex_lock (&pool->lock);
  while (r == 0 && (p = behind_over (pool, off, len))) {
    c = p->left_on;
    if (p->done || c->broken || !c->h) {
      /* Ended, or its connection closing: libnbd lets go of it next. */
      if ((int64_t) now_ms () >= deadline) {
        errno = ETIMEDOUT;
        r = -1;
      }
      else
        wait_until (&pool->changed, &pool->lock, deadline);
      continue;
    }
    c->users++;
    p->refs++;
    p->next = c->waiters;
    c->waiters = p;
    broken = false;
    r = await (pool, c, p, deadline, &broken);
    if (p->done)
      r = 0;                    /* ended, well or not: it is not ours */
    stop_waiting (c, p);
    pthread_mutex_unlock (&pool->lock);
    give_back (pool, c, broken);
    pthread_mutex_lock (&pool->lock);
  }
  pthread_mutex_unlock (&pool->lock);
  return r;
}


/* Run one command: see nbd-pool.h.  A command that got an error reply
 * is not repeated: the server said no. */
int
nbd_pool_command (struct nbd_pool *pool, enum nbd_pool_cmd cmd, void *buf,
                  uint64_t len, uint64_t off, int64_t deadline,
                  bool may_leave)
{
  struct conn *c;
  bool broken;
  int r;

  if ((cmd == NBD_POOL_WRITE || cmd == NBD_POOL_ZERO) &&
      after_behind (pool, off, len, deadline) == -1)
    return -1;
  for (;;) {
    c = borrow (pool);
    if (!c->h && reconnect (pool, c, deadline) == -1) {
      give_back (pool, c, false);
      return -1;
    }
    broken = false;
    r = issue (pool, c, cmd, buf, len, off, deadline, may_leave, &broken);
    give_back (pool, c, broken);
    if (r == 0 || !broken || pool->opts.failfast ||
        (int64_t) now_ms () >= deadline)
      return r;
  }
}

/* A connection of the pool: every slot is connected once it opened. */
struct nbd_handle *
nbd_pool_handle (struct nbd_pool *pool)
{
  return pool->conns[0].h;
}

void
nbd_pool_stopping (struct nbd_pool *pool)
{
  __atomic_store_n (&pool->stopping, true, __ATOMIC_RELAXED);
}

void
nbd_pool_close (struct nbd_pool *pool)
{
  unsigned i;

  for (i = 0; i < pool->nconns; i++) {
    if (pool->conns[i].h)
      member_nbd_disconnect (pool->conns[i].h);
    close (pool->conns[i].ring);
  }
  pthread_mutex_destroy (&pool->lock);
  pthread_cond_destroy (&pool->changed);
  free (pool->conns);
  free (pool->uri);
  free (pool);
}

/* Open the pool: a ring per connection, then every connection at once
 * (nbd-connect.c). */
struct nbd_pool *
nbd_pool_open (const char *uri, const struct member_open_options *opts,
               unsigned count, void (*reconnected) (void *), void *opaque,
               char *err, size_t errlen)
{
  struct nbd_pool *pool = calloc (1, sizeof *pool);
  struct nbd_handle **hs = NULL;
  unsigned i;

  if (!pool) {
    snprintf (err, errlen, "%s: %s", uri, strerror (ENOMEM));
    return NULL;
  }
  pthread_mutex_init (&pool->lock, NULL);
  cond_init_monotonic (&pool->changed);
  pool->opts = *opts;
  pool->reconnected = reconnected;
  pool->opaque = opaque;
  if (!(pool->uri = strdup (uri)) ||
      !(pool->conns = calloc (count, sizeof *pool->conns)) ||
      !(hs = calloc (count, sizeof *hs))) {
    snprintf (err, errlen, "%s: %s", uri, strerror (ENOMEM));
    goto fail;
  }
  for (i = 0; i < count; i++) {
    pool->conns[i].ring = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (pool->conns[i].ring == -1) {
      snprintf (err, errlen, "%s: eventfd: %s", uri, strerror (errno));
      goto fail;
    }
    pool->nconns = i + 1;
  }
  if (member_nbd_connect_all (uri, opts, INT64_MAX, hs, count, err, errlen))
    goto fail;
  for (i = 0; i < count; i++)
    pool->conns[i].h = hs[i];
  free (hs);
  return pool;

 fail:
  free (hs);
  nbd_pool_close (pool);
  return NULL;
}
