/* nbdraid: how an array comes back consistent when it starts: the
 * partial parity log's or the write journal's replay, and md's rule
 * for dirty degraded parity arrays. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "consistency.h"

/* The partial parity log: after an unclean stop, replay it; when it
 * covered stripes in flight and every entry was sound, the array is
 * consistent and needs no resync (md's ppl_init_log()).  The logs are
 * then emptied. */
static int
load_ppl (struct raid_array *a, const struct md_superblock *ref,
          const struct raid_options *opts, char *err, size_t errlen)
{
  bool dirty = !a->in_sync;

  if (ppl_open (a, ref) == -1)
    return array_refuse (err, errlen, "%s", strerror (errno));
  if (!a->ppl.on)
    return 0;
  if (a->geo.chunk_bytes + PPL_HEADER_BYTES > a->ppl.area_bytes)
    return array_refuse (err, errlen,
                         "array %s: chunk %" PRIu64 "K does "
                         "not fit the partial parity log's %" PRIu64 "K "
                         "with its header",
                         a->name, a->geo.chunk_bytes / 1024,
                         a->ppl.area_bytes / 1024);
  if (opts->readonly)
    return 0;
  if (ppl_recover (a, dirty, err, errlen) == -1)
    return -1;
  if (dirty && a->ppl.replayed > 0 && a->ppl.skipped == 0) {
    a->in_sync = 1;
    a->resync_front = a->ops->sync_units (a);
    array_write_superblocks (a);
  }
  return 0;
}

/* The write journal: open its device (or refuse the array without
 * it), and replay what it holds past its tail. */
static int
load_journal (struct raid_array *a, const struct raid_config *cfg,
              const struct md_superblock *ref, const struct raid_options *opts,
              char *err, size_t errlen)
{
  if (journal_open (a, cfg, ref, opts, err, errlen) == -1)
    return -1;
  return journal_recover (a, err, errlen);
}

/* md's raid5_run(): a parity array that did not stop cleanly and has a
 * member missing cannot tell whether the stripes in flight when it
 * stopped still rebuild that member right (the write hole), so it
 * starts only when told to, or when a partial parity log made those
 * stripes right.  A member that holds parity alone (a RAID4's last,
 * a RAID0 taken over while its parity disk is built) is no such
 * member: no data is rebuilt from it. */
static int
check_dirty_degraded (const struct raid_array *a,
                      const struct raid_options *opts, char *err, size_t errlen)
{
  unsigned i, missing = 0, which = 0;

  if (a->geo.parity_members == 0 || a->in_sync || a->ppl.on
      || (a->journal.on && !a->journal.missing) || opts->start_dirty_degraded)
    return 0;
  for (i = 0; i < a->geo.members; i++)
    if (slot_state (&a->slots[i]) != SLOT_ACTIVE
        && !geometry_role_only_parity (&a->geo, i) && !missing++)
      which = i;
  if (!missing)
    return 0;
  return array_refuse (err, errlen,
                       "array %s: not stopped cleanly and "
                       "degraded (role %u, %s): the missing member's blocks "
                       "of stripes written as it stopped may be rebuilt "
                       "wrong (the write hole); start it anyway with "
                       "start-dirty-degraded=true (md's "
                       "start_dirty_degraded)",
                       a->name, which,
                       a->slots[which].path ? a->slots[which].path : "missing");
}

int
assemble_consistency (struct raid_array *a, const struct raid_config *cfg,
                      const struct md_superblock *ref,
                      const struct raid_options *opts, char *err, size_t errlen)
{
  if (load_ppl (a, ref, opts, err, errlen) == -1
      || load_journal (a, cfg, ref, opts, err, errlen) == -1)
    return -1;
  return check_dirty_degraded (a, opts, err, errlen);
}
