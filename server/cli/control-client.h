/* nbdraid: reaching a running array's control socket
 * (control-client.c). */
#ifndef NBDRAID_CONTROL_CLIENT_H
#define NBDRAID_CONTROL_CLIENT_H

#include <stdbool.h>

/* Connect to the control socket (socket_path, or config's) and check
 * that root or we serve it: the fd, or -1 with a message printed
 * (unless quiet, for a refused or missing socket). */
int control_connect (const char *socket_path, const char *config,
                     bool quiet);

#endif
