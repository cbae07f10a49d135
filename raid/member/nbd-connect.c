/* nbdraid: connecting to an NBD member's server, and leaving it. */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include "clock.h"
#include "nbd-connect.h"

/* Start connecting a new handle to uri; NULL with err set if that
 * fails at once. */
static struct nbd_handle *
start_connect (const char *uri, char *err, size_t errlen)
{
  struct nbd_handle *h = nbd_create ();

  if (!h) {
    snprintf (err, errlen, "%s: %s", uri, nbd_get_error ());
    return NULL;
  }
  /* A PSK file in the URI (tls-psk-file=) is the admin's own config. */
  nbd_set_uri_allow_local_file (h, true);
  if (nbd_add_meta_context (h, LIBNBD_CONTEXT_BASE_ALLOCATION) == -1 ||
      nbd_aio_connect_uri (h, uri) == -1) {
    snprintf (err, errlen, "%s: %s", uri, nbd_get_error ());
    nbd_close (h);
    return NULL;
  }
  return h;
}

/* Connect count handles into h[] at once: poll them all, and let
 * each handshake go on as its socket is ready. */
int
member_nbd_connect_all (const char *uri,
                        const struct member_open_options *opts,
                        int64_t deadline, struct nbd_handle **h,
                        unsigned count, char *err, size_t errlen)
{
  int64_t limit = (int64_t) now_ms () +
    (int64_t) opts->connect_timeout_s * 1000;
  struct pollfd *fds = calloc (count, sizeof *fds);
  unsigned *who = calloc (count, sizeof *who), i, k, waiting;

  if (limit < deadline)
    deadline = limit;
  for (i = 0; i < count; i++)
    h[i] = NULL;
  if (!fds || !who) {
    snprintf (err, errlen, "%s: %s", uri, strerror (ENOMEM));
    goto fail;
  }
  for (i = 0; i < count; i++)
    if (!(h[i] = start_connect (uri, err, errlen)))
      goto fail;
  for (;;) {
    int64_t left = deadline - (int64_t) now_ms ();

    for (waiting = 0, i = 0; i < count; i++)
      if (nbd_aio_is_connecting (h[i]) == 1) {
        unsigned dir = nbd_aio_get_direction (h[i]);
        fds[waiting] = (struct pollfd) {
          .fd = nbd_aio_get_fd (h[i]),
          .events = (dir & LIBNBD_AIO_DIRECTION_READ ? POLLIN : 0) |
                    (dir & LIBNBD_AIO_DIRECTION_WRITE ? POLLOUT : 0),
        };
        who[waiting++] = i;
      }
    if (waiting == 0)
      break;
    if (left <= 0) {
      snprintf (err, errlen, "%s: connect timed out after %u s", uri,
                opts->connect_timeout_s);
      goto fail;
    }
    if (poll (fds, waiting, (int) (left > 1000 ? 1000 : left)) == -1 &&
        errno != EINTR) {
      snprintf (err, errlen, "%s: poll: %s", uri, strerror (errno));
      goto fail;
    }
    for (k = 0; k < waiting; k++) {
      struct nbd_handle *c = h[who[k]];
      short r = fds[k].revents;

      if (((r & (POLLIN | POLLHUP | POLLERR)) &&
           nbd_aio_notify_read (c) == -1) ||
          ((r & POLLOUT) && nbd_aio_is_connecting (c) == 1 &&
           nbd_aio_notify_write (c) == -1)) {
        snprintf (err, errlen, "%s: %s", uri, nbd_get_error ()
                  ? nbd_get_error () : "connection failed");
        goto fail;
      }
    }
  }
  for (i = 0; i < count; i++)
    if (nbd_aio_is_ready (h[i]) != 1) {
      snprintf (err, errlen, "%s: %s", uri, nbd_get_error ()
                ? nbd_get_error () : "connection failed");
      goto fail;
    }
  free (fds);
  free (who);
  return 0;

 fail:
  for (i = 0; i < count; i++) {
    if (h[i])
      nbd_close (h[i]);
    h[i] = NULL;
  }
  free (fds);
  free (who);
  return -1;
}

/* Connect one handle within the connect timeout (and the deadline). */
struct nbd_handle *
member_nbd_connect_one (const char *uri,
                        const struct member_open_options *opts,
                        int64_t deadline, char *err, size_t errlen)
{
  struct nbd_handle *h;

  return member_nbd_connect_all (uri, opts, deadline, &h, 1, err, errlen)
         ? NULL : h;
}

/* Say goodbye (NBD_CMD_DISC, and TLS's close) before closing, briefly:
 * a server that does not answer is not waited for. */
void
member_nbd_disconnect (struct nbd_handle *h)
{
  int64_t deadline = (int64_t) now_ms () + 200;

  if (nbd_aio_is_ready (h) == 1 && nbd_aio_disconnect (h, 0) == 0)
    while (nbd_aio_is_closed (h) != 1 && nbd_aio_is_dead (h) != 1 &&
           (int64_t) now_ms () < deadline)
      if (nbd_poll (h, 50) == -1)
        break;
  nbd_close (h);
}
