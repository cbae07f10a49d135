/* nbdraid: read-only and writable at run time (mdadm --readonly and
 * --readwrite).  A nested array goes with the array it serves: a top
 * made read-only stops its own writes first, then theirs; made writable,
 * theirs come back first.
 */
#include <config.h>

#include <stdio.h>

#include "array.h"

int
raid_admin_readonly (struct raid_array *a, bool readonly, char *err,
                     size_t errlen)
{
  unsigned i;

  /* Members open read-only cannot be written whatever we say: only a
   * server started without readonly=true or nbdkit -r can. */
  if (!readonly && a->member_opts.readonly) {
    snprintf (err, errlen, "array %s was assembled read-only (readonly=true "
              "or nbdkit -r): its members are open read-only; serve it "
              "again without", a->name);
    return -1;
  }
  if (!readonly && array_still_owned (a, err, errlen) == -1)
    return -1;
  if (readonly)
    array_make_readonly (a);
  for (i = 0; i < a->nchildren; i++)
    if (raid_admin_readonly (a->children[i], readonly, err, errlen) == -1)
      return -1;
  if (!readonly)
    array_make_writable (a);
  return 0;
}

bool
raid_readonly (const struct raid_array *a)
{
  return __atomic_load_n (&a->refuse_writes, __ATOMIC_SEQ_CST);
}
