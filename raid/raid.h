/* nbdraid: the engine's public API.
 *
 * A handful of verbs on an array handle: assemble it from a config,
 * start its I/O threads, read, write, zero, flush, map extents, close.
 * Every call returns 0 or -1 with errno set; what went wrong is also
 * reported, with the member and offset, through the log callback.
 */
#ifndef NBDRAID_RAID_H
#define NBDRAID_RAID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config-file.h"
#include "geometry.h"

struct raid_array;

enum raid_log_level { RAID_LOG_DEBUG, RAID_LOG_INFO, RAID_LOG_ERROR };
typedef void (*raid_log_fn) (void *opaque, enum raid_log_level level,
                             const char *msg);

struct raid_options {
  bool readonly;
  /* Start even when members the superblocks expect are missing or
   * stale, as long as the level tolerates it (mdadm --run). */
  bool degraded;
  raid_log_fn log;              /* may be NULL */
  void *log_opaque;
};

/* Open the members of cfg, read and cross-check their superblocks and
 * build the array.  Starts no threads (nbdkit forks after this).
 * Returns NULL with a one-line reason in err. */
struct raid_array *raid_assemble (const struct raid_config *cfg,
                                  const struct raid_options *opts,
                                  char *err, size_t errlen);
/* Start the member I/O threads.  Returns 0 or -1 with errno set. */
int raid_start (struct raid_array *a);
void raid_close (struct raid_array *a);

const struct raid_geometry *raid_geometry (const struct raid_array *a);
uint64_t raid_size (const struct raid_array *a);
/* Whether the superblocks say the array was stopped cleanly (md's
 * resync_offset all ones). */
bool raid_clean (const struct raid_array *a);
/* Bytes of one full stripe's data (the write size with no
 * read-modify-write). */
uint64_t raid_stripe_bytes (const struct raid_array *a);

int raid_read (struct raid_array *a, void *buf, uint64_t count,
               uint64_t offset);
int raid_write (struct raid_array *a, const void *buf, uint64_t count,
                uint64_t offset, bool fua);
/* Zero a range; whole stripes are deallocated on every member. */
int raid_zero (struct raid_array *a, uint64_t count, uint64_t offset,
               bool fua);
int raid_flush (struct raid_array *a);

/* Report the range from offset as extents (hole = reads as zeros and
 * is deallocated).  May stop before count; reports at least one
 * extent.  fn returns 0 or -1 to stop with an error. */
typedef int (*raid_extent_fn) (void *opaque, uint64_t offset, uint64_t len,
                               bool hole);
int raid_extents (struct raid_array *a, uint64_t count, uint64_t offset,
                  raid_extent_fn fn, void *opaque);

/* Make redundancy consistent with the data for stripes (units for
 * mirrors) [first, first+n): P/Q recomputed, mirrors copied from the
 * first copy.  raid_sync_units() is how many there are. */
uint64_t raid_sync_units (const struct raid_array *a);
int raid_sync (struct raid_array *a, uint64_t first, uint64_t n);

/* Write the in-memory superblocks back to every member, with events
 * bumped and the given clean state, and flush them. */
int raid_update_superblocks (struct raid_array *a, bool clean);

/* nbdraid create: write md v1.2 superblocks for cfg on every member and
 * spare and, unless assume_clean, make parity and mirrors consistent.
 * Nothing is written until every check has passed. */
struct raid_create_options {
  bool assume_clean;
  bool force;                   /* overwrite existing md superblocks */
  /* Reorder the members (and the config file's member lines) so the
   * array survives the loss of any one controller, if it can. */
  bool arrange;
  /* Refuse an array that does not survive a controller loss. */
  bool strict_controllers;
  raid_log_fn log;              /* progress and notes (RAID_LOG_INFO) */
  void *log_opaque;
  void (*progress) (void *opaque, uint64_t done, uint64_t total);
};
int raid_create (struct raid_config *cfg,
                 const struct raid_create_options *opts,
                 char *err, size_t errlen);

#endif
