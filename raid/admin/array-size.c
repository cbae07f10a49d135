/* nbdraid: nbdraid grow --array-size SIZE|max, mdadm's --grow
 * --array-size: the array serves fewer bytes than its members hold, so
 * that a shrink (fewer members) loses nothing a client still uses:
 * mdadm wants it first, and so does nbdraid grow --raid-devices.  Like
 * md's array_size, it is not kept: a restart serves the whole array
 * again (the superblocks of a shrink under way say its smaller size).
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "array.h"
#include "config-file.h"
#include "refuse.h"

int
raid_admin_array_size (struct raid_array *a, const char *size, char *done,
                       size_t donelen, char *err, size_t errlen)
{
  uint64_t whole = __atomic_load_n (&a->geo.array_bytes, __ATOMIC_ACQUIRE);
  uint64_t before = raid_size (a), want = whole;

  if (strcmp (size, "max") != 0
      && (raid_parse_size (size, &want) == -1 || want == 0 || want % 1024))
    return array_refuse (err, errlen,
                         "'%s' is not an array size (give max, or bytes, a "
                         "multiple of 1K, with an optional K, M, G or T)",
                         size);
  if (want > whole)
    return array_refuse (err, errlen,
                         "size %s is more than array %s holds (%" PRIu64
                         " bytes)",
                         size, a->name, whole);
  if (admin_refuse_nested (a, "cutting its size", err, errlen) == -1)
    return -1;
  /* No request past the new end is inside the engine once it is set. */
  array_hold_requests (a);
  array_quiesce (a);
  __atomic_store_n (&a->size_limit, want == whole ? 0 : want,
                    __ATOMIC_RELEASE);
  array_unquiesce (a);
  array_release_requests (a);
  array_log (a, RAID_LOG_INFO,
             "array %s serves %" PRIu64 " bytes (%" PRIu64 " before, %" PRIu64
             " held)",
             a->name, want, before, whole);
  snprintf (done, donelen,
            "array %s serves %" PRIu64 " bytes, %" PRIu64
            " before; new connections see the new size",
            a->name, want, before);
  return 0;
}
