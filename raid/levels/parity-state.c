/* nbdraid: what the parity family (RAID5, RAID6) keeps per array: its
 * parity code, the writes gathered per stripe, and a chunk of zeros.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "stripe-column.h"

/* The setup op: the parity code, the stripe batches and a unit of
 * zeros, as a->level_state.  0, or -1 with the reason in err. */
int
parity_setup (struct raid_array *a, char *err, size_t errlen)
{
  const struct raid_geometry *g = &a->geo;
  struct parity_state *ps = calloc (1, sizeof *ps);
  void *zeros;

  if (!ps) {
    snprintf (err, errlen, "%s", strerror (ENOMEM));
    return -1;
  }
  a->level_state = ps;
  stripe_batches_init (&ps->batches);
  if (parity_init (&ps->code, g->data_members, g->parity_members) == -1) {
    snprintf (err, errlen, "%s", strerror (errno));
    return -1;
  }
  /* A private anonymous read-only mapping: zeros that cost no memory. */
  zeros = mmap (NULL, g->unit_bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
                -1, 0);
  if (zeros == MAP_FAILED) {
    snprintf (err, errlen, "mmap: %s", strerror (errno));
    return -1;
  }
  ps->zeros = zeros;
  return 0;
}

/* The teardown op: free what parity_setup made, even if it failed part way. */
void
parity_teardown (struct raid_array *a)
{
  struct parity_state *ps = a->level_state;

  if (!ps)
    return;
  if (ps->zeros)
    munmap ((void *) ps->zeros, a->geo.unit_bytes);
  stripe_batches_destroy (&ps->batches);
  parity_free (&ps->code);
  free (ps);
  a->level_state = NULL;
}
