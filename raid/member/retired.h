/* nbdraid: devices that left the array, closed once no request can
 * still be using them.
 *
 * Requests read a slot's device without a lock, so a device taken out
 * of its slot (nbdraid remove, add or re-add over it) may still be in
 * use by a request that read the slot just before; yet it must be
 * closed soon, or a removed disk stays held, a deleted member file
 * keeps its space and a flapping NBD member leaves a connection open
 * each time.  So requests count themselves in one of two counters, the
 * current epoch's; retired devices are closed once the epoch has moved
 * on and the old epoch's counter has drained, as in RCU.  Entering
 * costs a request two atomic additions.
 *
 * retired_enter and retired_exit may be called from any thread;
 * retired_add, retired_reclaim and retired_close_all from one thread at
 * a time (the control loop, or the array's setup and teardown).
 */
#ifndef NBDRAID_RETIRED_H
#define NBDRAID_RETIRED_H

#include <stdint.h>

struct member;

struct retired_list {
  struct member **m;
  unsigned n, cap;
};

struct retired {
  unsigned epoch;               /* requests count in users[epoch & 1] */
  uint64_t users[2];
  struct retired_list pending;  /* left since the epoch last moved */
  struct retired_list draining; /* left before: closed when users of
                                 * the previous epoch are gone */
};

/* A request begins: the ticket to pass to retired_exit. */
unsigned retired_enter (struct retired *r);
void retired_exit (struct retired *r, unsigned ticket);

/* m has left the array (no slot holds it any more): close it once no
 * request can hold it.  Without memory to list it, it stays open. */
void retired_add (struct retired *r, struct member *m);

/* Close what no request can hold any more, and start the wait for
 * what left since; call it now and then. */
void retired_reclaim (struct retired *r);

/* No request runs any more (the array is closing): close everything. */
void retired_close_all (struct retired *r);

#endif
