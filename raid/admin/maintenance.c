/* nbdraid: housekeeping, about once a second (raid_maintenance): what
 * no request does by itself.  Devices that left are closed once unused,
 * shared spares go to nested arrays that lost a member, the
 * superblocks are marked clean once writes stop (md's safemode), idle
 * bitmap regions are cleared, and members that went away are tried
 * again when the config asks for it (auto-readd).
 */
#include <config.h>

#include "array.h"
#include "clock.h"
#include "shared-spares.h"

/* auto-readd: try the devices of empty roles again now and then (an
 * NBD member whose host came back). */
#define READD_EVERY_MS 5000

/* Re-add the first device of a failed or missing role that answers
 * again; each is tried at most every READD_EVERY_MS. */
static void
readd_returning (struct raid_array *a)
{
  char err[512];
  unsigned m;

  for (m = 0; m < a->geo.members; m++) {
    struct raid_slot *s = &a->slots[m];
    enum slot_state st = slot_state (s);
    if ((st != SLOT_FAULTY && st != SLOT_MISSING) || !s->path ||
        now_ms () - s->readd_tried_ms < READD_EVERY_MS)
      continue;
    s->readd_tried_ms = now_ms ();
    if (raid_admin_readd (a, s->path, err, sizeof err) == 0)
      return;                   /* one at a time: the job picks it up */
  }
}

void
raid_maintenance (struct raid_array *a)
{
  unsigned i;

  for (i = 0; i < a->nchildren; i++)
    raid_maintenance (a->children[i]);
  retired_reclaim (&a->retired);
  shared_spares_give (a);
  if (a->readonly || array_check_alive (a) == -1)
    return;
  array_mark_clean_when_quiet (a);
  bitmap_sweep (a);
  if (a->auto_readd)
    readd_returning (a);
}
