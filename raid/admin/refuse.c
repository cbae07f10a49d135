/* nbdraid: the refusals grow --size, grow --raid-devices and grow
 * --level share, in one wording for all three.
 */
#include <config.h>

#include "refuse.h"

int
admin_refuse_unwritable (struct raid_array *a, char *err, size_t errlen)
{
  if (a->readonly)
    return array_refuse (err, errlen, "array %s is read-only", a->name);
  if (array_check_alive (a) == -1)
    return array_refuse (err, errlen, "array %s has failed", a->name);
  return 0;
}

int
admin_refuse_nested (const struct raid_array *a, const char *change, char *err,
                     size_t errlen)
{
  if (a->nchildren)
    return array_refuse (err, errlen,
                         "array %s is built of nested arrays: "
                         "%s is not supported",
                         a->name, change);
  return admin_refuse_journal (a, change, err, errlen);
}

int
admin_refuse_journal (const struct raid_array *a, const char *change,
                      char *err, size_t errlen)
{
  /* md reshapes no array with a journal (raid5.c check_reshape). */
  if (a->journal.on)
    return array_refuse (err, errlen,
                         "array %s keeps a write journal: %s is not "
                         "supported (md reshapes no journaled array)",
                         a->name, change);
  return 0;
}

int
admin_refuse_busy (struct raid_array *a, const char *later, char *err,
                   size_t errlen)
{
  if (a->job.kind != RAID_JOB_NONE)
    return array_refuse (err, errlen, "array %s is busy with a %s; %s later",
                         a->name, raid_job_name (a->job.kind), later);
  if (a->resync_front < a->ops->sync_units (a))
    return array_refuse (err, errlen, "array %s has a resync to finish first",
                         a->name);
  return 0;
}

int
admin_refuse_write_failed (const struct raid_array *a, char *err, size_t errlen)
{
  return array_refuse (err, errlen,
                       "array %s failed while its superblocks were written",
                       a->name);
}
