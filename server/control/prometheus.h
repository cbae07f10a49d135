/* nbdraid status --prometheus: arrays' status as metrics in the
 * Prometheus text exposition format, for node_exporter's textfile
 * collector or a scrape wrapper.
 */
#ifndef NBDRAID_PROMETHEUS_H
#define NBDRAID_PROMETHEUS_H

#include <stdio.h>

#include "raid.h"

/* One array's part: its status, and what the control plane knows of
 * it besides. */
struct metrics_array {
  struct raid_status st;
  uint64_t job_speed;           /* bytes per second, 0: unknown */
  unsigned shared_spares;       /* the top of nested arrays' free pool */
};

/* Write the metrics of arrays[0..n) on fp: each family once, its HELP
 * and TYPE lines, then its samples for every array, labelled with the
 * array's name (and a member's device and role). */
void prometheus_write (FILE *fp, const struct metrics_array *arrays,
                       unsigned n);

#endif
