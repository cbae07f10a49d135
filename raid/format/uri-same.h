/* nbdraid: do two NBD URIs name the same export, however spelt? */
#ifndef NBDRAID_URI_SAME_H
#define NBDRAID_URI_SAME_H

#include <stdbool.h>

/* Do the NBD URIs a and b name the same export?  The scheme and the
 * host compare case-insensitively; no port is NBD's port 10809; the
 * export names compare percent-decoded ("" and "/" are both the empty
 * export); the query parameters compare as sets, percent-decoded, a
 * socket= path by realpath when both exist, any other (tls-* too) only
 * when equal.  Text that is not a URI is the same only as itself.
 */
bool uri_same (const char *a, const char *b);

#endif
