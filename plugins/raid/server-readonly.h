/* nbdkit-raid-plugin: was nbdkit started with -r (--readonly)? */
#ifndef NBDRAID_SERVER_READONLY_H
#define NBDRAID_SERVER_READONLY_H

#include <stdbool.h>

bool server_readonly (void);

#endif
