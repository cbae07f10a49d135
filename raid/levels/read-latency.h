/* nbdraid: which copies of a mirror are slow to read, from each
 * member's average read time (struct member's read_ns), for the copies
 * family's choice of copy.  A copy is measured against its partners,
 * the roles holding copies of its units (geometry_role_partners), not
 * against the whole array: among many noisy members some one is always
 * far faster than most, while a remote copy's partners are still the
 * local copies it should give way to.
 */
#ifndef NBDRAID_READ_LATENCY_H
#define NBDRAID_READ_LATENCY_H

#include "array.h"

struct read_latency;

/* The state of an array of geometry g: its roles and their partners,
 * which depend on the level, layout and member count alone (changing
 * those runs the level's setup op again).  NULL if out of memory. */
struct read_latency *read_latency_new (const struct raid_geometry *g);
void read_latency_free (struct read_latency *rl);

/* For one request, the request's turn (a->read_turn): the roles whose
 * copies it reads only when no other copy can serve (slow), and the
 * one slow role, if any, whose copy it reads first to measure it again
 * (*probe, else -1), taken among the roles in first (those holding the
 * request's first unit), so that the probe does read it. */
void read_latency_plan (struct read_latency *rl, const struct raid_array *a,
                        unsigned turn, const struct member_set *first,
                        struct member_set *slow, int *probe);
/* Was role m slow at the last plan (what status shows)? */
bool read_latency_slow (const struct read_latency *rl, unsigned m);

#endif
