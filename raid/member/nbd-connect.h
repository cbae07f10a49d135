/* nbdraid: connecting to an NBD member's server, and leaving it.
 * Connections are made with libnbd's asynchronous API, several at once
 * where a member holds several: each takes a few round trips of
 * handshake (and TLS's), which need not add up.
 */
#ifndef NBDRAID_NBD_CONNECT_H
#define NBDRAID_NBD_CONNECT_H

#include <stddef.h>
#include <stdint.h>

#include <libnbd.h>

#include "member.h"

/* Connect count handles to uri into h[], all at once, within opts'
 * connect timeout and the deadline (monotonic ms, INT64_MAX for none).
 * 0, or -1 with every handle closed and NULL and the reason, naming
 * uri, in err. */
int member_nbd_connect_all (const char *uri,
                            const struct member_open_options *opts,
                            int64_t deadline, struct nbd_handle **h,
                            unsigned count, char *err, size_t errlen);

/* One handle the same way; NULL with err set on failure. */
struct nbd_handle *member_nbd_connect_one (const char *uri,
                                           const struct member_open_options *opts,
                                           int64_t deadline, char *err,
                                           size_t errlen);

/* Say goodbye (NBD_CMD_DISC) briefly, then close h. */
void member_nbd_disconnect (struct nbd_handle *h);

#endif
