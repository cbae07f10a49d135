/* nbdraid: a pool of connections to one NBD server, each carrying many
 * commands at once, connected again when they break.  An NBD member's
 * operations (member-nbd.c) are commands run on its pool.
 */
#ifndef NBDRAID_NBD_POOL_H
#define NBDRAID_NBD_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libnbd.h>

#include "member.h"

enum nbd_pool_cmd {
  NBD_POOL_READ,
  NBD_POOL_WRITE,
  NBD_POOL_ZERO,
  NBD_POOL_FLUSH,
  NBD_POOL_STATUS,              /* buf: a struct nbd_pool_extent */
};

/* A block status answer: its first extent, if it had one. */
struct nbd_pool_extent {
  bool got;
  uint32_t len, flags;
};

struct nbd_pool;

/* Connect count connections to uri with opts (TLS, the connect
 * timeout, failfast).  reconnected (opaque) is called each time a
 * connection is made again: the server back may be another, and what
 * the caller knew of its contents is stale.  NULL with the reason,
 * naming uri, in err. */
struct nbd_pool *nbd_pool_open (const char *uri,
                                const struct member_open_options *opts,
                                unsigned count, void (*reconnected) (void *),
                                void *opaque, char *err, size_t errlen);

/* One of the pool's connections, to ask what the server offers. */
struct nbd_handle *nbd_pool_handle (struct nbd_pool *pool);

/* Run one command on whichever connection works, sent again over
 * connections made again until the deadline (monotonic ms); once only
 * if the options say failfast.  A command that may_leave works on a
 * copy of buf and is left behind, still running, when the deadline
 * passes.  0, or -1 with errno. */
int nbd_pool_command (struct nbd_pool *pool, enum nbd_pool_cmd cmd,
                      void *buf, uint64_t len, uint64_t off,
                      int64_t deadline, bool may_leave);

/* The server stops: connect once from now on, with no backoff. */
void nbd_pool_stopping (struct nbd_pool *pool);

/* Disconnect every connection and free the pool. */
void nbd_pool_close (struct nbd_pool *pool);

#endif
