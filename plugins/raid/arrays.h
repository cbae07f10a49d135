/* nbdkit-raid-plugin: the arrays one server serves (arrays.c). */
#ifndef NBDRAID_ARRAYS_H
#define NBDRAID_ARRAYS_H

#include <stdbool.h>

#include <nbdkit-plugin.h>

#include "control.h"
#include "raid.h"

/* One array: its config, the array once assembled, its control plane
 * and the clients connected to it. */
struct served {
  char *path;                   /* the config file */
  struct raid_config cfg;
  bool loaded;                  /* cfg holds the parsed file */
  struct raid_array *array;     /* NULL: left out (so far) */
  struct control *control;
  bool ready;                   /* started: connections may use it */
  unsigned connections;
  /* spare-groups.c: it lacks a spare, and the spare given it. */
  bool wants_spare;
  char *incoming;
  struct served *incoming_from;
  unsigned tries;
};

/* config=FILE (again and again) and dir=DIR (its *.conf files). */
int arrays_add_config (const char *path);
int arrays_add_dir (const char *dir);
/* Parse every config.  0, or -1 after nbdkit_error. */
int arrays_load (void);
/* Assemble each array and open its control socket.  With one config
 * any failure is fatal, as it always was; with several an array that
 * fails is reported and left out, and only none at all is fatal.  An
 * array short of members waits up to wait_s seconds for them, then
 * starts degraded (mdadm's last resort). */
int arrays_assemble (const struct raid_options *opts, uint64_t wait_s,
                     const struct control_server *server);
/* After nbdkit's fork: the member I/O threads and the control loops. */
int arrays_start (void);
/* nbdraid reload: serve the configs new in the directories, and those
 * left out so far (read again).  Lines of what it did in report; -1 if
 * any was left out. */
int arrays_reload (char *report, size_t len);
/* The array an export name asks for: "" is the only array when there
 * is one; NULL with nbdkit_error when no array is named so. */
struct served *arrays_find (const char *export_name);
/* nbdkit's export list: each array's name and what it is. */
int arrays_list (struct nbdkit_exports *exports);
/* The default export's name: the only array's; "" when several. */
const char *arrays_default (void);
/* The arrays, for spare-groups.c: how many, and each. */
unsigned arrays_count (void);
struct served *arrays_at (unsigned i);
/* Clients connected to any array. */
unsigned arrays_connections (void);
/* The names, comma-separated, for messages. */
void arrays_names (char *buf, size_t len);
void arrays_free (void);

#endif
