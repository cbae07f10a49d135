/* nbdraid: members that are NBD exports, through libnbd.
 *
 *   nbd://host:port/export   nbd+unix:///export?socket=PATH   nbds://...
 *
 * A member holds a few connections, and each connection carries many
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
 * command went past the request timeout) is closed once the last
 * command on it has given up, and connected again, with backoff, by
 * the next command that needs it; the command is sent again (all ours
 * can be repeated) for as long as the request timeout allows.  After
 * that the operation fails, and the array fails the member and runs on
 * without it.
 *
 * A command given up on is still libnbd's until the handle is closed:
 * its reply, if it comes, would be read into the caller's buffer, and
 * the rest of a write sent from it, long after the caller freed it.
 * So nobody moves bytes on a broken connection, and a command given up
 * on returns only once no thread is inside libnbd on it any more.
 *
 * A command given less than the request timeout (the heartbeat's
 * superblock reads and writes, one interval each) works on a copy of
 * the caller's buffer, and is left behind when its time runs out: the
 * server is slow, not gone.  Breaking the connection instead would send
 * every command on it again, to a server already behind: on a loaded
 * host, each beat that ran out added to the load that made the next
 * one run out.  One command left behind per connection: a second that
 * runs out there breaks it.  NBD does not order writes in flight, so
 * a write that overlaps one left behind waits for it: a superblock
 * written after a late beat must not be overwritten by the beat's
 * older copy.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
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
#include "hole-memo.h"
#include "member.h"
#include "nbd-connect.h"

/* Largest single NBD request we send (servers must take 32 MiB). */
#define MAX_REQUEST (32 * 1024 * 1024)

/* Most bytes one block status request asks about (the protocol's
 * length is 32 bits), and the least: the answer is kept, so asking
 * ahead saves the round trips of the questions that follow. */
#define MAX_STATUS (1u << 30)
#define MIN_STATUS (64u << 20)

/* The longest the driver polls before looking at its deadline. */
#define DRIVE_MS 1000

enum cmd { CMD_READ, CMD_WRITE, CMD_ZERO, CMD_FLUSH, CMD_STATUS };

/* One command's wait.  libnbd's completion callback marks it done; it
 * is freed by whichever lets go last, the waiter or libnbd (which
 * holds it until the command is retired or the handle closed, even
 * after a waiter gave up on it). */
struct pending {
  pthread_cond_t wake;          /* done, driving handed over, or broken */
  bool done;
  int error;
  unsigned refs;
  pthread_mutex_t *lock;        /* the member's */
  struct extent_reply {         /* block status: the first extent */
    bool got;
    uint32_t len, flags;
  } extent;
  void *own;                    /* its own copy of the caller's buffer */
  struct conn *left_on;         /* left behind on it, counted there */
  enum cmd cmd;
  uint64_t off, len;
  struct nbd_member *member;
  struct pending *next;         /* the connection's waiters */
  struct pending *next_behind;  /* the member's writes left behind */
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

struct nbd_member {
  pthread_mutex_t lock;         /* guards conns and pendings */
  pthread_cond_t changed;       /* a connection was given back, or a
                                 * write left behind ended */
  struct conn *conns;
  unsigned nconns;
  unsigned timeout_ms;
  bool failfast;                /* a broken connection's request fails */
  bool stopping;                /* the server stops: connect once */
  char *uri;
  struct member_open_options opts;
  bool can_flush, can_zero;
  bool can_status;              /* the server reports base:allocation */
  struct hole_memo known;        /* the last block status answer */
  uint64_t max_request;
  struct pending *behind;       /* writes left behind, still out */
};

/* The NBD backend's own state of member m. */
static struct nbd_member *
priv (struct member *m)
{
  return m->priv;
}

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
borrow (struct nbd_member *n)
{
  struct conn *busy, *unconnected, *c;
  unsigned i;

  pthread_mutex_lock (&n->lock);
  for (;;) {
    busy = unconnected = NULL;
    for (i = 0; i < n->nconns; i++) {
      c = &n->conns[i];
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
    pthread_cond_wait (&n->changed, &n->lock);
  }
 out:
  c->users++;
  pthread_mutex_unlock (&n->lock);
  return c;
}

/* Done with c; it broke if `broken`.  The last user of a broken
 * connection closes it, leaving the slot to connect again. */
static void
give_back (struct nbd_member *n, struct conn *c, bool broken)
{
  struct nbd_handle *dead = NULL;
  int saved = errno;

  pthread_mutex_lock (&n->lock);
  c->broken |= broken;
  c->users--;
  if (c->broken && c->users == 0) {
    dead = c->h;
    c->h = NULL;
    c->broken = false;
  }
  if (c->broken)
    wake_all (c);
  pthread_cond_broadcast (&n->changed);
  pthread_mutex_unlock (&n->lock);
  if (dead)
    nbd_close (dead);
  errno = saved;
}

/* Connect c again before the deadline, backing off between tries
 * (100 ms, doubling to 1 s); once only when the server is stopping. */
static int
reconnect (struct nbd_member *n, struct conn *c, int64_t deadline)
{
  int64_t backoff = 100, left;
  char err[256];
  struct nbd_handle *h;

  for (;;) {
    h = member_nbd_connect_one (n->uri, &n->opts, deadline, err, sizeof err);
    if (h) {
      pthread_mutex_lock (&n->lock);
      c->h = h;
      pthread_mutex_unlock (&n->lock);
      hole_memo_forget (&n->known);     /* a server back may be another */
      return 0;
    }
    left = deadline - (int64_t) now_ms ();
    if (left <= 0 || __atomic_load_n (&n->stopping, __ATOMIC_RELAXED)) {
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
give_up (struct nbd_member *n, struct conn *c, struct pending *p)
{
  if (!c->broken) {
    c->broken = true;
    wake_all (c);
  }
  if (c->driving)
    eventfd_write (c->ring, 1);
  while (c->inside)
    pthread_cond_wait (&p->wake, &n->lock);
}

/* Wait for p's command on c until the deadline, driving c while nobody
 * else does.  0, or -1 with errno (and *broken if c is no good any
 * more).  Called and returns with the lock held. */
static int
await (struct nbd_member *n, struct conn *c, struct pending *p,
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
        if (p->cmd == CMD_WRITE) {
          p->next_behind = n->behind;
          n->behind = p;
        }
        return -1;
      }
      *broken = true;
      give_up (n, c, p);
      return -1;
    }
    if (c->driving) {
      wait_until (&p->wake, &n->lock, deadline);
      continue;
    }
    c->driving = true;
    c->inside++;
    pthread_mutex_unlock (&n->lock);
    r = drive (c, (int) (left < DRIVE_MS ? left : DRIVE_MS));
    pthread_mutex_lock (&n->lock);
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
    for (b = &p->member->behind; *b; b = &(*b)->next_behind)
      if (*b == p) {
        *b = p->next_behind;
        pthread_cond_broadcast (&p->member->changed);
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
    p->extent = (struct extent_reply) {
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
start (struct nbd_handle *h, enum cmd cmd, void *buf, uint64_t len,
       uint64_t off, struct pending *p)
{
  nbd_completion_callback cb = { .callback = command_done, .user_data = p,
                                 .free = command_freed };

  switch (cmd) {
  case CMD_READ:
    return nbd_aio_pread (h, buf, len, off, cb, 0);
  case CMD_WRITE:
    return nbd_aio_pwrite (h, buf, len, off, cb, 0);
  case CMD_ZERO:
    return nbd_aio_zero (h, len, off, cb, 0);
  case CMD_FLUSH:
    return nbd_aio_flush (h, cb, 0);
  case CMD_STATUS:
    return nbd_aio_block_status (h, len, off, (nbd_extent_callback) {
        .callback = extent_seen, .user_data = p }, cb, 0);
  }
  abort ();
}

/* Issue one command on c and wait for it; on a copy of buf if it may
 * be left behind. */
static int
issue (struct nbd_member *n, struct conn *c, enum cmd cmd, void *buf,
       uint64_t len, uint64_t off, int64_t deadline, bool may_leave,
       bool *broken)
{
  struct pending *p = calloc (1, sizeof *p);
  bool output;
  int r, saved;

  if (!p)
    return -1;
  if (may_leave && (cmd == CMD_READ || cmd == CMD_WRITE)) {
    if (!(p->own = malloc (len))) {
      free (p);
      return -1;
    }
    if (cmd == CMD_WRITE)
      memcpy (p->own, buf, len);
  }
  cond_init_monotonic (&p->wake);
  p->refs = 2;                  /* ours, and libnbd's until it frees it */
  p->lock = &n->lock;
  p->member = n;
  p->cmd = cmd;
  p->off = off;
  p->len = len;
  pthread_mutex_lock (&n->lock);
  if (c->broken) {              /* broke since it was borrowed */
    pthread_mutex_unlock (&n->lock);
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
  pthread_mutex_unlock (&n->lock);

  if (start (c->h, cmd, p->own ? p->own : buf, len, off, p) == -1) {
    errno = nbd_get_errno () ? nbd_get_errno () : EIO;
    r = -1;
    pthread_mutex_lock (&n->lock);
    leave_libnbd (c);
  }
  else {
    /* libnbd sent what the socket took; a driver polling only for
     * replies must learn that the rest waits to be written. */
    output = nbd_aio_get_direction (c->h) & LIBNBD_AIO_DIRECTION_WRITE;
    pthread_mutex_lock (&n->lock);
    leave_libnbd (c);
    if (output && c->driving)
      eventfd_write (c->ring, 1);
    r = await (n, c, p, deadline, broken);
    if (r == 0 && cmd == CMD_STATUS)
      *(struct extent_reply *) buf = p->extent;
    if (r == 0 && cmd == CMD_READ && p->own)
      memcpy (buf, p->own, len);
  }
  saved = errno;
  stop_waiting (c, p);
  pthread_mutex_unlock (&n->lock);
  /* NBD_ESHUTDOWN: the server is going down and wants its clients to
   * hang up; the command may go again, to the server it restarts as. */
  if (r == -1 && !*broken)
    *broken = saved == ESHUTDOWN || nbd_aio_is_dead (c->h) == 1
              || nbd_aio_is_closed (c->h) == 1;
  errno = saved;
  return r;
}

/* How long an operation may take now: the request timeout, or less
 * once the server is stopping (nbd_member_hurry). */
static unsigned
timeout_of (struct member *m)
{
  return __atomic_load_n (&priv (m)->timeout_ms, __ATOMIC_RELAXED);
}

/* A write left behind that overlaps [off, off + len), or NULL.  Lock
 * held. */
static struct pending *
behind_over (const struct nbd_member *n, uint64_t off, uint64_t len)
{
  struct pending *p;

  for (p = n->behind; p; p = p->next_behind)
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
after_behind (struct nbd_member *n, uint64_t off, uint64_t len,
              int64_t deadline)
{
  struct pending *p;
  struct conn *c;
  bool broken;
  int r = 0;

  pthread_mutex_lock (&n->lock);
  while (r == 0 && (p = behind_over (n, off, len))) {
    c = p->left_on;
    if (p->done || c->broken || !c->h) {
      /* Ended, or its connection closing: libnbd lets go of it next. */
      if ((int64_t) now_ms () >= deadline) {
        errno = ETIMEDOUT;
        r = -1;
      }
      else
        wait_until (&n->changed, &n->lock, deadline);
      continue;
    }
    c->users++;
    p->refs++;
    p->next = c->waiters;
    c->waiters = p;
    broken = false;
    r = await (n, c, p, deadline, &broken);
    if (p->done)
      r = 0;                    /* ended, well or not: it is not ours */
    stop_waiting (c, p);
    pthread_mutex_unlock (&n->lock);
    give_back (n, c, broken);
    pthread_mutex_lock (&n->lock);
  }
  pthread_mutex_unlock (&n->lock);
  return r;
}

/* One command, on whichever connection works, for up to timeout_ms
 * (left behind after it, if that is less than the request timeout).
 * A command that got an error reply is not repeated: the server said
 * no. */
static int
command (struct member *m, enum cmd cmd, void *buf, uint64_t len, uint64_t off,
         unsigned timeout_ms)
{
  struct nbd_member *n = priv (m);
  int64_t deadline
      = (int64_t)now_ms ()
        + (timeout_ms < timeout_of (m) ? timeout_ms : timeout_of (m));
  struct conn *c;
  bool broken;
  int r;

  if ((cmd == CMD_WRITE || cmd == CMD_ZERO) &&
      after_behind (n, off, len, deadline) == -1)
    return -1;
  for (;;) {
    c = borrow (n);
    if (!c->h && reconnect (n, c, deadline) == -1) {
      give_back (n, c, false);
      return -1;
    }
    broken = false;
    r = issue (n, c, cmd, buf, len, off, deadline,
               timeout_ms < timeout_of (m), &broken);
    give_back (n, c, broken);
    if (r == 0 || !broken || n->failfast || (int64_t) now_ms () >= deadline)
      return r;
  }
}

/* Split a transfer into requests the server takes, each given up to
 * timeout_ms. */
static int
transfer (struct member *m, enum cmd cmd, void *buf, uint64_t len, uint64_t off,
          unsigned timeout_ms)
{
  uint64_t max = priv (m)->max_request;

  while (len > 0) {
    uint64_t n = len < max ? len : max;
    if (command (m, cmd, buf, n, off, timeout_ms) == -1)
      return -1;
    if (buf)
      buf = (char *) buf + n;
    len -= n;
    off += n;
  }
  return 0;
}

/* The pread_within op, in requests the server takes. */
static int
nbd_member_pread_within (struct member *m, void *buf, size_t len, uint64_t off,
                         unsigned timeout_ms)
{
  return transfer (m, CMD_READ, buf, len, off, timeout_ms);
}

/* The pread op: within the request timeout. */
static int
nbd_member_pread (struct member *m, void *buf, size_t len, uint64_t off)
{
  return nbd_member_pread_within (m, buf, len, off, timeout_of (m));
}

/* The pwrite_within op, the hole memo told before and after. */
static int
nbd_member_pwrite_within (struct member *m, const void *buf, size_t len,
                          uint64_t off, unsigned timeout_ms)
{
  hole_memo_changing (&priv (m)->known, off, len);
  return hole_memo_changed (
      &priv (m)->known,
      transfer (m, CMD_WRITE, (void *)buf, len, off, timeout_ms));
}

/* The pwrite op: within the request timeout. */
static int
nbd_member_pwrite (struct member *m, const void *buf, size_t len,
                   uint64_t off)
{
  return nbd_member_pwrite_within (m, buf, len, off, timeout_of (m));
}

/* The flush op: NBD_CMD_FLUSH, or nothing when the server offers none. */
static int
nbd_member_flush (struct member *m)
{
  return priv (m)->can_flush
             ? command (m, CMD_FLUSH, NULL, 0, 0, timeout_of (m))
             : 0;
}

/* NBD_CMD_WRITE_ZEROES where the server takes it, else writes of zeros
 * 64 KiB at a time. */
static int
write_zeros (struct member *m, uint64_t len, uint64_t off)
{
  static const char zeros[64 * 1024];

  if (priv (m)->can_zero)
    return transfer (m, CMD_ZERO, NULL, len, off, timeout_of (m));
  while (len > 0) {
    uint64_t n = len < sizeof zeros ? len : sizeof zeros;
    if (command (m, CMD_WRITE, (void *)zeros, n, off, timeout_of (m)) == -1)
      return -1;
    len -= n;
    off += n;
  }
  return 0;
}

/* The zero op: write_zeros, the hole memo told before and after. */
static int
nbd_member_zero (struct member *m, uint64_t len, uint64_t off)
{
  hole_memo_changing (&priv (m)->known, off, len);
  return hole_memo_changed (&priv (m)->known, write_zeros (m, len, off));
}

/* A hole is what the server says reads as zeros (NBD_STATE_ZERO),
 * allocated or not: what the caller skips is reading it.  The server
 * is asked about at least MIN_STATUS bytes and its first extent kept:
 * the questions that follow, about the next chunk or piece, cost no
 * round trip. */
static int
nbd_member_is_hole (struct member *m, uint64_t len, uint64_t off)
{
  struct nbd_member *n = priv (m);
  struct extent_reply e = { .got = false };
  uint64_t ask = len < MIN_STATUS ? MIN_STATUS : len;
  struct hole_memo_ticket t;
  bool hole;
  int known;

  if (!n->can_status)
    return 0;
  known = hole_memo_recall (&n->known, off, len, &t);
  if (known != -1)
    return known;
  if (ask > m->size_bytes - off)
    ask = m->size_bytes - off;
  if (ask > MAX_STATUS)
    ask = MAX_STATUS;
  if (command (m, CMD_STATUS, &e, ask, off, timeout_of (m)) == -1)
    return -1;
  if (!e.got || e.len == 0)
    return 0;
  if (e.len > ask)
    e.len = ask;
  hole = (e.flags & LIBNBD_STATE_ZERO) != 0;
  hole_memo_keep (&n->known, &t, off, off + e.len, hole);
  return hole && e.len >= len;
}

/* The close op: disconnect every connection and free the member. */
static void
nbd_member_close (struct member *m)
{
  struct nbd_member *n = priv (m);
  unsigned i;

  for (i = 0; i < n->nconns; i++) {
    if (n->conns[i].h)
      member_nbd_disconnect (n->conns[i].h);
    close (n->conns[i].ring);
  }
  pthread_mutex_destroy (&n->lock);
  pthread_cond_destroy (&n->changed);
  hole_memo_destroy (&n->known);
  free (n->conns);
  free (n->uri);
  free (n);
  free (m->name);
  free (m);
}

/* The hurry op: lower the request timeout to timeout_ms, and try to
 * connect once, with no backoff: a server that went away is not
 * waited for while ours stops, one still there answers at once. */
static void
nbd_member_hurry (struct member *m, unsigned timeout_ms)
{
  if (timeout_ms < timeout_of (m))
    __atomic_store_n (&priv (m)->timeout_ms, timeout_ms, __ATOMIC_RELAXED);
  __atomic_store_n (&priv (m)->stopping, true, __ATOMIC_RELAXED);
}

static const struct member_ops nbd_ops = {
  .kind = "nbd",
  .pread = nbd_member_pread,
  .pwrite = nbd_member_pwrite,
  .flush = nbd_member_flush,
  .pread_within = nbd_member_pread_within,
  .pwrite_within = nbd_member_pwrite_within,
  .hurry = nbd_member_hurry,
  .zero = nbd_member_zero,
  .is_hole = nbd_member_is_hole,
  .close = nbd_member_close,
};

/* Open an NBD export as a member: open its connections, then learn its
 * size and what the server can do. */
struct member *
member_nbd_open (const char *uri, const struct member_open_options *opts,
                 char *err, size_t errlen)
{
  struct member *m = calloc (1, sizeof *m);
  struct nbd_member *n = calloc (1, sizeof *n);
  unsigned i, count = opts->nbd_connections ? opts->nbd_connections : 1;
  struct nbd_handle *h, **hs = NULL;
  int64_t size = -1, max;

  if (!m || !n || !(m->name = strdup (uri)) || !(n->uri = strdup (uri)) ||
      !(n->conns = calloc (count, sizeof *n->conns))) {
    snprintf (err, errlen, "%s: %s", uri, strerror (ENOMEM));
    goto fail;
  }
  pthread_mutex_init (&n->lock, NULL);
  cond_init_monotonic (&n->changed);
  hole_memo_init (&n->known);
  m->priv = n;
  m->ops = &nbd_ops;
  m->waits = true;
  n->timeout_ms = opts->nbd_timeout_s * 1000;
  n->failfast = opts->failfast;
  n->opts = *opts;
  for (i = 0; i < count; i++) {
    n->conns[i].ring = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (n->conns[i].ring == -1) {
      snprintf (err, errlen, "%s: eventfd: %s", uri, strerror (errno));
      goto fail;
    }
    n->nconns = i + 1;
  }
  if (!(hs = calloc (count, sizeof *hs))) {
    snprintf (err, errlen, "%s: %s", uri, strerror (ENOMEM));
    goto fail;
  }
  if (member_nbd_connect_all (uri, opts, INT64_MAX, hs, count, err, errlen))
    goto fail;
  for (i = 0; i < count; i++)
    n->conns[i].h = hs[i];
  free (hs);
  hs = NULL;
  h = n->conns[0].h;
  size = nbd_get_size (h);
  if (size < 0) {
    snprintf (err, errlen, "%s: %s", uri, nbd_get_error ());
    goto fail;
  }
  if (!opts->readonly && nbd_is_read_only (h) == 1) {
    snprintf (err, errlen, "%s: the export is read-only", uri);
    goto fail;
  }
  m->size_bytes = (uint64_t) size;
  n->can_flush = nbd_can_flush (h) == 1;
  n->can_zero = nbd_can_zero (h) == 1;
  n->can_status =
    nbd_can_meta_context (h, LIBNBD_CONTEXT_BASE_ALLOCATION) == 1;
  max = nbd_get_block_size (h, LIBNBD_SIZE_MAXIMUM);
  n->max_request = max > 0 && max < MAX_REQUEST ? (uint64_t) max : MAX_REQUEST;
  return m;

 fail:
  free (hs);
  if (m && m->ops)
    nbd_member_close (m);
  else {
    if (m)
      free (m->name);
    free (m);
    if (n) {
      free (n->conns);
      free (n->uri);
    }
    free (n);
  }
  return NULL;
}
