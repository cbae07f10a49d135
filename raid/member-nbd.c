/* nbdraid: members that are NBD exports, through libnbd.
 *
 *   nbd://host:port/export   nbd+unix:///export?socket=PATH   nbds://...
 *
 * A member holds a few connections; each operation borrows one, issues
 * the command with libnbd's asynchronous API and polls for its reply
 * until the request timeout.  A connection that breaks (the server
 * restarted, a link flapped) is connected again, with backoff, and the
 * command sent again (all our commands can be repeated), for as long as
 * the request timeout allows; after that the operation fails, and the
 * array fails the member and runs on without it.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libnbd.h>

#include "member.h"

/* Largest single NBD request we send (servers must take 32 MiB). */
#define MAX_REQUEST (32 * 1024 * 1024)

struct nbd_member {
  pthread_mutex_t lock;
  pthread_cond_t freed;
  struct nbd_handle **conns;    /* NULL: broken, to connect again */
  bool *busy;
  unsigned nconns;
  unsigned timeout_ms;
  char *uri;
  struct member_open_options opts;
  bool can_flush, can_zero;
  uint64_t max_request;
};

static struct nbd_member *
priv (struct member *m)
{
  return m->priv;
}

static int64_t
now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct nbd_handle *connect_one (const char *uri,
                                       const struct member_open_options *opts,
                                       int64_t deadline, char *err,
                                       size_t errlen);

/* Borrow a connection slot: a connected one if one is free, else a
 * broken one for the caller to connect again. */
static unsigned
borrow (struct nbd_member *n)
{
  unsigned i;
  int broken = -1;

  pthread_mutex_lock (&n->lock);
  for (;;) {
    for (i = 0; i < n->nconns; i++)
      if (!n->busy[i]) {
        if (n->conns[i])
          goto out;
        broken = (int) i;
      }
    if (broken >= 0) {
      i = (unsigned) broken;
      goto out;
    }
    pthread_cond_wait (&n->freed, &n->lock);
  }
 out:
  n->busy[i] = true;
  pthread_mutex_unlock (&n->lock);
  return i;
}

/* Give a slot back, closing its connection if it broke. */
static void
give_back (struct nbd_member *n, unsigned c, bool broken)
{
  struct nbd_handle *dead = NULL;

  pthread_mutex_lock (&n->lock);
  n->busy[c] = false;
  if (broken) {
    dead = n->conns[c];
    n->conns[c] = NULL;
  }
  pthread_cond_broadcast (&n->freed);
  pthread_mutex_unlock (&n->lock);
  if (dead)
    nbd_close (dead);
}

/* Connect slot c again before the deadline, backing off between tries
 * (100 ms, doubling to 1 s). */
static int
reconnect (struct nbd_member *n, unsigned c, int64_t deadline)
{
  int64_t backoff = 100, left;
  char err[256];
  struct nbd_handle *h;

  for (;;) {
    h = connect_one (n->uri, &n->opts, deadline, err, sizeof err);
    if (h) {
      n->conns[c] = h;          /* the slot is ours: busy */
      return 0;
    }
    left = deadline - now_ms ();
    if (left <= 0) {
      errno = ENOTCONN;
      return -1;
    }
    nanosleep (&(struct timespec) {
      .tv_sec = (backoff < left ? backoff : left) / 1000,
      .tv_nsec = (backoff < left ? backoff : left) % 1000 * 1000000 }, NULL);
    backoff = backoff < 500 ? backoff * 2 : 1000;
  }
}

/* Wait for a command until the deadline.  0, or -1 with errno. */
static int
wait_command (struct nbd_handle *h, int64_t cookie, int64_t deadline,
              bool *broken)
{
  for (;;) {
    int r = nbd_aio_command_completed (h, (uint64_t) cookie);
    int64_t left;

    if (r == 1)
      return 0;
    if (r == -1) {
      errno = nbd_get_errno () ? nbd_get_errno () : EIO;
      *broken = nbd_aio_is_dead (h) || nbd_aio_is_closed (h);
      return -1;
    }
    left = deadline - now_ms ();
    if (left <= 0) {
      errno = ETIMEDOUT;
      *broken = true;           /* the reply may still come: drop it all */
      return -1;
    }
    if (nbd_poll (h, (int) (left > 1000 ? 1000 : left)) == -1) {
      errno = nbd_get_errno () ? nbd_get_errno () : EIO;
      *broken = true;
      return -1;
    }
  }
}

enum cmd { CMD_READ, CMD_WRITE, CMD_ZERO, CMD_FLUSH };

/* Issue one command on connection h and wait for it. */
static int
issue (struct nbd_handle *h, enum cmd cmd, void *buf, uint64_t len,
       uint64_t off, int64_t deadline, bool *broken)
{
  int64_t cookie = -1;

  switch (cmd) {
  case CMD_READ:
    cookie = nbd_aio_pread (h, buf, len, off, NBD_NULL_COMPLETION, 0);
    break;
  case CMD_WRITE:
    cookie = nbd_aio_pwrite (h, buf, len, off, NBD_NULL_COMPLETION, 0);
    break;
  case CMD_ZERO:
    cookie = nbd_aio_zero (h, len, off, NBD_NULL_COMPLETION, 0);
    break;
  case CMD_FLUSH:
    cookie = nbd_aio_flush (h, NBD_NULL_COMPLETION, 0);
    break;
  }
  if (cookie == -1) {
    errno = nbd_get_errno () ? nbd_get_errno () : EIO;
    *broken = nbd_aio_is_dead (h) || nbd_aio_is_closed (h);
    return -1;
  }
  return wait_command (h, cookie, deadline, broken);
}

/* One command, on whichever connection works, until the deadline.  A
 * command that got an error reply is not repeated: the server said no. */
static int
command (struct member *m, enum cmd cmd, void *buf, uint64_t len,
         uint64_t off)
{
  struct nbd_member *n = priv (m);
  int64_t deadline = now_ms () + n->timeout_ms;
  bool broken;
  unsigned c;
  int r;

  for (;;) {
    c = borrow (n);
    if (!n->conns[c] && reconnect (n, c, deadline) == -1) {
      give_back (n, c, false);
      return -1;
    }
    broken = false;
    r = issue (n->conns[c], cmd, buf, len, off, deadline, &broken);
    give_back (n, c, broken);
    if (r == 0 || !broken || now_ms () >= deadline)
      return r;
  }
}

/* Split a transfer into requests the server takes. */
static int
transfer (struct member *m, enum cmd cmd, void *buf, uint64_t len,
          uint64_t off)
{
  uint64_t max = priv (m)->max_request;

  while (len > 0) {
    uint64_t n = len < max ? len : max;
    if (command (m, cmd, buf, n, off) == -1)
      return -1;
    if (buf)
      buf = (char *) buf + n;
    len -= n;
    off += n;
  }
  return 0;
}

static int
nbd_member_pread (struct member *m, void *buf, size_t len, uint64_t off)
{
  return transfer (m, CMD_READ, buf, len, off);
}

static int
nbd_member_pwrite (struct member *m, const void *buf, size_t len,
                   uint64_t off)
{
  return transfer (m, CMD_WRITE, (void *) buf, len, off);
}

static int
nbd_member_flush (struct member *m)
{
  return priv (m)->can_flush ? command (m, CMD_FLUSH, NULL, 0, 0) : 0;
}

static int
nbd_member_zero (struct member *m, uint64_t len, uint64_t off)
{
  static const char zeros[64 * 1024];

  if (priv (m)->can_zero)
    return transfer (m, CMD_ZERO, NULL, len, off);
  while (len > 0) {
    uint64_t n = len < sizeof zeros ? len : sizeof zeros;
    if (command (m, CMD_WRITE, (void *) zeros, n, off) == -1)
      return -1;
    len -= n;
    off += n;
  }
  return 0;
}

static int
nbd_member_is_hole (struct member *m, uint64_t len, uint64_t off)
{
  return 0;                     /* not known without reading */
}

/* Say goodbye (NBD_CMD_DISC, and TLS's close) before closing, briefly:
 * a server that does not answer is not waited for. */
static void
disconnect (struct nbd_handle *h)
{
  int64_t deadline = now_ms () + 200;

  if (nbd_aio_is_ready (h) == 1 && nbd_aio_disconnect (h, 0) == 0)
    while (nbd_aio_is_closed (h) != 1 && nbd_aio_is_dead (h) != 1 &&
           now_ms () < deadline)
      if (nbd_poll (h, 50) == -1)
        break;
  nbd_close (h);
}

static void
nbd_member_close (struct member *m)
{
  struct nbd_member *n = priv (m);
  unsigned i;

  for (i = 0; i < n->nconns; i++)
    if (n->conns[i])
      disconnect (n->conns[i]);
  pthread_mutex_destroy (&n->lock);
  pthread_cond_destroy (&n->freed);
  free (n->conns);
  free (n->busy);
  free (n->uri);
  free (n);
  free (m->name);
  free (m);
}

static const struct member_ops nbd_ops = {
  .kind = "nbd",
  .pread = nbd_member_pread,
  .pwrite = nbd_member_pwrite,
  .flush = nbd_member_flush,
  .zero = nbd_member_zero,
  .is_hole = nbd_member_is_hole,
  .close = nbd_member_close,
};

/* Connect one handle within the connect timeout (and the deadline). */
static struct nbd_handle *
connect_one (const char *uri, const struct member_open_options *opts,
             int64_t deadline, char *err, size_t errlen)
{
  int64_t limit = now_ms () + (int64_t) opts->connect_timeout_s * 1000;
  struct nbd_handle *h = nbd_create ();

  if (limit < deadline)
    deadline = limit;

  if (!h) {
    snprintf (err, errlen, "%s: %s", uri, nbd_get_error ());
    return NULL;
  }
  /* A PSK file in the URI (tls-psk-file=) is the admin's own config. */
  nbd_set_uri_allow_local_file (h, true);
  if (nbd_aio_connect_uri (h, uri) == -1)
    goto fail;
  while (nbd_aio_is_connecting (h) == 1) {
    int64_t left = deadline - now_ms ();
    if (left <= 0) {
      snprintf (err, errlen, "%s: connect timed out after %u s", uri,
                opts->connect_timeout_s);
      nbd_close (h);
      return NULL;
    }
    if (nbd_poll (h, (int) (left > 1000 ? 1000 : left)) == -1)
      goto fail;
  }
  if (nbd_aio_is_ready (h) != 1)
    goto fail;
  return h;

 fail:
  snprintf (err, errlen, "%s: %s", uri, nbd_get_error ()
            ? nbd_get_error () : "connection failed");
  nbd_close (h);
  return NULL;
}

struct member *
member_nbd_open (const char *uri, const struct member_open_options *opts,
                 char *err, size_t errlen)
{
  struct member *m = calloc (1, sizeof *m);
  struct nbd_member *n = calloc (1, sizeof *n);
  unsigned i, count = opts->nbd_connections ? opts->nbd_connections : 1;
  int64_t size = -1, max;

  if (!m || !n || !(m->name = strdup (uri)) || !(n->uri = strdup (uri)) ||
      !(n->conns = calloc (count, sizeof *n->conns)) ||
      !(n->busy = calloc (count, sizeof *n->busy))) {
    snprintf (err, errlen, "%s: %s", uri, strerror (ENOMEM));
    goto fail;
  }
  pthread_mutex_init (&n->lock, NULL);
  pthread_cond_init (&n->freed, NULL);
  m->priv = n;
  m->ops = &nbd_ops;
  m->waits = true;
  n->timeout_ms = opts->nbd_timeout_s * 1000;
  n->opts = *opts;
  for (i = 0; i < count; i++) {
    n->conns[i] = connect_one (uri, opts, INT64_MAX, err, errlen);
    if (!n->conns[i])
      goto fail;
    n->nconns = i + 1;
  }
  size = nbd_get_size (n->conns[0]);
  if (size < 0) {
    snprintf (err, errlen, "%s: %s", uri, nbd_get_error ());
    goto fail;
  }
  if (!opts->readonly && nbd_is_read_only (n->conns[0]) == 1) {
    snprintf (err, errlen, "%s: the export is read-only", uri);
    goto fail;
  }
  m->size_bytes = (uint64_t) size;
  n->can_flush = nbd_can_flush (n->conns[0]) == 1;
  n->can_zero = nbd_can_zero (n->conns[0]) == 1;
  max = nbd_get_block_size (n->conns[0], LIBNBD_SIZE_MAXIMUM);
  n->max_request = max > 0 && max < MAX_REQUEST ? (uint64_t) max : MAX_REQUEST;
  return m;

 fail:
  if (m && m->ops)
    nbd_member_close (m);
  else {
    if (m)
      free (m->name);
    free (m);
    if (n) {
      free (n->conns);
      free (n->busy);
      free (n->uri);
    }
    free (n);
  }
  return NULL;
}
