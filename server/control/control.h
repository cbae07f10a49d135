/* nbdraid: the control plane of a running array.
 *
 * A libev loop on a thread of its own serves the admin's UNIX socket
 * (nbdraid status, fail, add, ...) and drives the array's background
 * jobs at the configured speed.  The engine knows nothing of it: the
 * loop calls the engine, and the engine's events reach the loop through
 * control_event, from any thread.
 */
#ifndef NBDRAID_CONTROL_H
#define NBDRAID_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

#include "raid.h"

struct control;

/* Before assembly: the object events can be queued on. */
struct control *control_new (struct raid_config *cfg);
/* What the verbs on the whole server do (the plugin's, which knows
 * nbdkit and every array it serves).  stop: end the server, 0 or -1
 * with the reason in err (clients connected, unless force).  reload:
 * serve the arrays whose configs appeared, or were left out, since;
 * what it did in report, one line each; -1 if any was left out. */
struct control_server {
  int (*stop) (bool force, char *err, size_t errlen);
  int (*reload) (char *report, size_t len);
  /* Every second, on the array's control thread, after its own
   * housekeeping: what the server does across its arrays. */
  void (*tick) (struct control *c, struct raid_array *a,
                struct raid_config *cfg);
};
void control_set_server (struct control *c, const struct control_server *s);
const struct control_server *control_server (struct control *c);
/* For raid_options.event (opaque: the control). */
void control_event (void *opaque, enum raid_event event, const char *array,
                    const char *member, const char *detail);
/* Before nbdkit forks (so the socket is there when nbdkit's pidfile
 * is, and errors reach the terminal): create the socket.  After the
 * fork: start the loop thread on it.  Each returns 0, or -1 with a
 * one-line reason in err. */
int control_listen (struct control *c, char *err, size_t errlen);
int control_start (struct control *c, struct raid_array *a, char *err,
                   size_t errlen);
/* Stop the loop and close its clients: events still queue, unheard,
 * while the array stops.  Then free it all (halting it first). */
void control_halt (struct control *c);
void control_free (struct control *c);

/* What control-commands.c needs of the loop. */
struct control_client;
void control_subscribe (struct control *c, struct control_client *cl);
/* Answer cl "OK" once no resync, recovery or check runs. */
void control_wait (struct control *c, struct control_client *cl);
void control_speed (struct control *c, uint64_t *min, uint64_t *max);
void control_set_speed (struct control *c, uint64_t min, uint64_t max);
/* The checks' positions and schedule (checks.h). */
struct checks *control_checks (struct control *c);
/* Progress speed of the current job, bytes per second (0: unknown). */
uint64_t control_job_speed (struct control *c);
void control_kick (struct control *c);

/* control-parse.c: one request line (tab-separated words, no newline)
 * split in place into the verb and its arguments, with --json,
 * --prometheus, --force and --array NAME taken out wherever they are.
 * 0, or -1 with the reason in err. */
#define CONTROL_MAX_WORDS 8
struct control_request {
  char *word[CONTROL_MAX_WORDS];        /* word[0] is the verb */
  int nwords;
  bool json, prometheus, force;
  const char *array;                    /* --array NAME, or NULL */
};
int control_parse (char *line, struct control_request *rq, char *err,
                   size_t errlen);

/* control-commands.c: run one request (tab-separated words) and write
 * the response on fd.  Returns true if the connection stays open (a
 * monitor), false when it is done. */
struct raid_array;
bool control_command (struct control *c, struct raid_array *a,
                      struct raid_config *cfg, struct control_client *cl,
                      int fd, char *line);

#endif
