/* nbdraid: members that are NBD exports, through libnbd.
 *
 *   nbd://host:port/export   nbd+unix:///export?socket=PATH   nbds://...
 *
 * Each operation is one or more commands on the member's pool of
 * connections (nbd-pool.c), given the request timeout: a connection
 * that breaks is made again and the command sent again until then.
 * After that the operation fails, and the array fails the member and
 * runs on without it.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include "clock.h"
#include "hole-memo.h"
#include "member.h"
#include "nbd-pool.h"

/* Largest single NBD request we send (servers must take 32 MiB). */
#define MAX_REQUEST (32 * 1024 * 1024)

/* Most bytes one block status request asks about (the protocol's
 * length is 32 bits), and the least: the answer is kept, so asking
 * ahead saves the round trips of the questions that follow. */
#define MAX_STATUS (1u << 30)
#define MIN_STATUS (64u << 20)

struct nbd_member {
  struct nbd_pool *pool;
  unsigned timeout_ms;
  bool can_flush, can_zero;
  bool can_status;              /* the server reports base:allocation */
  struct hole_memo known;       /* the last block status answer */
  uint64_t max_request;
};

/* The NBD backend's own state of member m. */
static struct nbd_member *
priv (struct member *m)
{
  return m->priv;
}

/* How long an operation may take now: the request timeout, or less
 * once the server is stopping (nbd_member_hurry). */
static unsigned
timeout_of (struct member *m)
{
  return __atomic_load_n (&priv (m)->timeout_ms, __ATOMIC_RELAXED);
}

/* One command for up to timeout_ms; left behind after it, if that is
 * less than the request timeout (the heartbeat's: nbd-pool.c). */
static int
command (struct member *m, enum nbd_pool_cmd cmd, void *buf, uint64_t len,
         uint64_t off, unsigned timeout_ms)
{
  unsigned request = timeout_of (m);
  bool may_leave = timeout_ms < request;

  return nbd_pool_command (priv (m)->pool, cmd, buf, len, off,
                           (int64_t) now_ms () +
                           (may_leave ? timeout_ms : request),
                           may_leave);
}

/* Split a transfer into requests the server takes, each given up to
 * timeout_ms. */
static int
transfer (struct member *m, enum nbd_pool_cmd cmd, void *buf, uint64_t len,
          uint64_t off, unsigned timeout_ms)
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
  return transfer (m, NBD_POOL_READ, buf, len, off, timeout_ms);
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
      transfer (m, NBD_POOL_WRITE, (void *)buf, len, off, timeout_ms));
}

/* The pwrite op: within the request timeout. */
static int
nbd_member_pwrite (struct member *m, const void *buf, size_t len,
                   uint64_t off)
{
  return nbd_member_pwrite_within (m, buf, len, off, timeout_of (m));
}

/* The flush op: NBD_NBD_POOL_FLUSH, or nothing when the server offers none. */
static int
nbd_member_flush (struct member *m)
{
  return priv (m)->can_flush
             ? command (m, NBD_POOL_FLUSH, NULL, 0, 0, timeout_of (m))
             : 0;
}

/* NBD_NBD_POOL_WRITE_ZEROES where the server takes it, else writes of zeros
 * 64 KiB at a time. */
static int
write_zeros (struct member *m, uint64_t len, uint64_t off)
{
  static const char zeros[64 * 1024];

  if (priv (m)->can_zero)
    return transfer (m, NBD_POOL_ZERO, NULL, len, off, timeout_of (m));
  while (len > 0) {
    uint64_t n = len < sizeof zeros ? len : sizeof zeros;
    if (command (m, NBD_POOL_WRITE, (void *)zeros, n, off,
                 timeout_of (m)) == -1)
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
  struct nbd_pool_extent e = { .got = false };
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
  if (command (m, NBD_POOL_STATUS, &e, ask, off, timeout_of (m)) == -1)
    return -1;
  if (!e.got || e.len == 0)
    return 0;
  if (e.len > ask)
    e.len = ask;
  hole = (e.flags & LIBNBD_STATE_ZERO) != 0;
  hole_memo_keep (&n->known, &t, off, off + e.len, hole);
  return hole && e.len >= len;
}

/* The close op: close the pool and free the member. */
static void
nbd_member_close (struct member *m)
{
  struct nbd_member *n = priv (m);

  if (n->pool)
    nbd_pool_close (n->pool);
  hole_memo_destroy (&n->known);
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
  nbd_pool_stopping (priv (m)->pool);
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

/* The pool's reconnected hook: a server back may be another. */
static void
forget_holes (void *opaque)
{
  hole_memo_forget (opaque);
}

/* Open an NBD export as a member: open its pool of connections, then
 * learn its size and what the server can do. */
struct member *
member_nbd_open (const char *uri, const struct member_open_options *opts,
                 char *err, size_t errlen)
{
  struct member *m = calloc (1, sizeof *m);
  struct nbd_member *n = calloc (1, sizeof *n);
  unsigned count = opts->nbd_connections ? opts->nbd_connections : 1;
  struct nbd_handle *h;
  int64_t size, max;

  if (!m || !n || !(m->name = strdup (uri))) {
    snprintf (err, errlen, "%s: %s", uri, strerror (ENOMEM));
    if (m)
      free (m->name);
    free (m);
    free (n);
    return NULL;
  }
  hole_memo_init (&n->known);
  m->priv = n;
  m->ops = &nbd_ops;
  m->waits = true;
  n->timeout_ms = opts->nbd_timeout_s * 1000;
  n->pool = nbd_pool_open (uri, opts, count, forget_holes, &n->known, err,
                           errlen);
  if (!n->pool)
    goto fail;
  h = nbd_pool_handle (n->pool);
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
  nbd_member_close (m);
  return NULL;
}
