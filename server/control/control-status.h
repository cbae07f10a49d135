/* nbdraid: the answer to status (control-status.c). */
#ifndef NBDRAID_CONTROL_STATUS_H
#define NBDRAID_CONTROL_STATUS_H

#include <stdbool.h>
#include <stdio.h>

#include "control.h"

/* Answer status: OK, then the array's status and its nested arrays',
 * as text or JSON. */
void control_reply_status (struct control *c, struct raid_array *a, FILE *fp,
                           bool json);
/* Answer status --prometheus: OK, then the metrics of the array and
 * its nested arrays. */
void control_reply_metrics (struct control *c, struct raid_array *a, FILE *fp);

#endif
