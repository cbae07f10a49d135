/* nbdraid: memory a loop keeps from one pass to the next.
 *
 * A fresh buffer of a few MiB is fresh pages: the kernel faults in and
 * zeroes each one on first touch and takes them back at free.  Rebuild
 * windows that each allocated their own spent more time there than in
 * copying data.
 */
#ifndef NBDRAID_SCRATCH_H
#define NBDRAID_SCRATCH_H

#include <stddef.h>

struct scratch {
  void *mem;
  size_t bytes;
};

/* At least `bytes` of page-aligned memory, kept for the next call;
 * what it held is lost when it has to grow.  NULL (ENOMEM) on
 * failure. */
void *scratch_get (struct scratch *s, size_t bytes);
void scratch_free (struct scratch *s);

#endif
