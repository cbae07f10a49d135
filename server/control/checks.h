/* nbdraid: checks that outlast a restart: where each array's check
 * stopped, a time budget for a run, and runs on a schedule (checks.c).
 * On the control loop's thread only.
 */
#ifndef NBDRAID_CHECKS_H
#define NBDRAID_CHECKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raid.h"

struct checks;

/* For top and every array nested in it, with cfg's schedule; NULL
 * without memory. */
struct checks *checks_new (struct raid_array *top,
                           const struct raid_config *cfg);
void checks_free (struct checks *k);

/* Start a check (or repair) of a, where its last one stopped unless
 * from_start, for at most budget_s seconds (0: to the end).  0 with
 * what happened in msg ("check started", "check resumed at 40.0%"),
 * or -1 with the reason in err. */
int checks_start (struct checks *k, struct raid_array *a, bool repair,
                  bool from_start, uint64_t budget_s, char *msg,
                  size_t msglen, char *err, size_t errlen);
/* Stop a's check, keeping where it got to: the next one resumes. */
int checks_idle (struct checks *k, struct raid_array *a, char *err,
                 size_t errlen);
/* Where a's check stopped, in bytes of each member, if one stopped
 * short and none runs now; 0 if not. */
uint64_t checks_paused (struct checks *k, struct raid_array *a);
/* Every second: save where running checks are, stop those whose
 * budget is spent, note those that finished, start scheduled runs. */
void checks_tick (struct checks *k);

#endif
