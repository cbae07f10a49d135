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

/* What an md level is, from the engine's one level table
 * (raid/format/level.c).  Every question of the kind "does this level
 * have a chunk" asks it. */
struct raid_level {
  int md_level;                 /* as the superblock says it */
  const char *name;             /* "raid6", as mdadm says it */
  bool has_chunk;               /* RAID1 has none */
  /* md's RAID0: each member's whole data area is used, in zones where
   * members differ; its superblocks record no used size. */
  bool zoned;
  unsigned parity_members;      /* RAID5 1, RAID6 2; else 0 */
  /* mdadm's names of its layouts, for messages; NULL: the level has no
   * layout to choose. */
  const char *layouts;
  uint32_t default_layout;
  /* mdadm's spelling to md's layout word: 0, or -1 if not the level's
   * (NULL when layouts is). */
  int (*parse_layout) (const char *s, uint32_t *layout);
  /* md's layout word to mdadm's spelling ("-" for none): false if it
   * is not a layout the engine serves. */
  bool (*name_layout) (uint32_t layout, char *buf, size_t len);
  unsigned (*min_members) (uint32_t layout);
  /* How many members may fail, whichever they are, with every byte
   * still readable. */
  unsigned (*tolerates) (uint32_t layout, unsigned members);
};

/* The level md calls md_level: NULL if the engine does not serve it. */
const struct raid_level *raid_level_find (int md_level);
/* "6", "raid6" or "RAID6": NULL if none. */
const struct raid_level *raid_level_parse (const char *s);
/* mdadm's name of a level's layout ("left-symmetric", "n2", "-"), or
 * "unknown layout 0x..", written into buf. */
const char *raid_layout_name (int md_level, uint32_t layout, char *buf,
                              size_t len);

/* A member as the config names it: a path, an NBD URI (nbd://,
 * nbds://, nbd+unix://, nbds+unix://), or "array:NAME" for the nested
 * array NAME. */
bool raid_spec_is_uri (const char *spec);
/* The NAME of an "array:NAME" spec, or NULL. */
const char *raid_spec_array (const char *spec);

struct raid_array;

enum raid_log_level { RAID_LOG_DEBUG, RAID_LOG_INFO, RAID_LOG_ERROR };
typedef void (*raid_log_fn) (void *opaque, enum raid_log_level level,
                             const char *msg);

/* Events, as mdadm --monitor names them. */
enum raid_event {
  RAID_EVENT_FAIL,              /* a member failed */
  RAID_EVENT_DEGRADED_ARRAY,    /* the array runs without a member */
  RAID_EVENT_FAILED_ARRAY,      /* more lost than the level tolerates */
  RAID_EVENT_REBUILD_STARTED,   /* recovery (or resync) began */
  RAID_EVENT_REBUILD_PROGRESS,  /* detail: "20", "40", "60", "80" */
  RAID_EVENT_REBUILD_FINISHED,
  RAID_EVENT_SPARE_ACTIVE,      /* a rebuilt member joined the array */
  RAID_EVENT_CHECK_FINISHED,    /* detail: mismatched sectors */
  RAID_EVENT_MOVE_SPARE,        /* a shared spare went to a nested array;
                                   detail: the top array */
};
const char *raid_event_name (enum raid_event event);
/* array: the name of the array it happened in (a nested array's, for
 * one); member: the device's path or URI, or "". */
typedef void (*raid_event_fn) (void *opaque, enum raid_event event,
                               const char *array, const char *member,
                               const char *detail);

struct raid_options {
  bool readonly;
  /* Start even when members the superblocks expect are missing or
   * stale, as long as the level tolerates it (mdadm --run). */
  bool degraded;
  raid_log_fn log;              /* may be NULL */
  raid_event_fn event;          /* may be NULL; from any thread */
  void *log_opaque;             /* passed to both */
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

/* Housekeeping, about once a second (the control plane calls it):
 * superblocks marked clean after writes stop (md's safemode), bitmap
 * bits of idle regions cleared, failed members re-added when the config
 * asks for it. */
void raid_maintenance (struct raid_array *a);

/* Background work: one job at a time.  With no job running,
 * raid_job_step starts what the array needs by itself: a resync after
 * an unclean stop (or a fresh create), a recovery onto a spare when a
 * role is empty, the continuation of a recovery that was cut short. */
enum raid_job_kind {
  RAID_JOB_NONE, RAID_JOB_RESYNC, RAID_JOB_RECOVERY, RAID_JOB_CHECK,
  RAID_JOB_REPAIR, RAID_JOB_REPLACE,
};
const char *raid_job_name (enum raid_job_kind kind);

/* Do up to budget bytes (at most RAID_JOB_STEP_MAX) of member I/O of
 * background work.  Returns 1 if there is more to do, 0 if there is
 * nothing, -1 on error.  A step's stripes stay locked until it ends, but
 * every step also starts and drains the workers, leaving cores idle at
 * its end: 16 MiB steps rebuilt 10% faster than 4 MiB ones when idle and
 * twice as fast under client load (client p99 +10%). */
#define RAID_JOB_STEP_MAX (16 * 1024 * 1024)
int raid_job_step (struct raid_array *a, uint64_t budget);
/* Start a check (or repair) of every stripe; refused while another job
 * runs.  0, or -1 with a one-line reason in err. */
int raid_job_check (struct raid_array *a, bool repair, char *err,
                    size_t errlen);
/* Stop a check or repair (mdadm's idle). */
int raid_job_idle (struct raid_array *a, char *err, size_t errlen);
/* The current job and how far it is, in bytes of each member. */
void raid_job_progress (struct raid_array *a, enum raid_job_kind *kind,
                        uint64_t *done, uint64_t *total);
/* Client I/O so far, in bytes (background work yields to it). */
uint64_t raid_client_bytes (const struct raid_array *a);

/* The picture `nbdraid status` draws. */
enum raid_device_state {
  RAID_DEV_ACTIVE, RAID_DEV_RECOVERING, RAID_DEV_FAULTY, RAID_DEV_MISSING,
  RAID_DEV_SPARE, RAID_DEV_REPLACING,
};
struct raid_device_status {
  int role;                     /* -1 outside the roles */
  enum raid_device_state state;
  char path[256];
  char controller[64];
  char why[256];
  uint64_t recovered_bytes;     /* RECOVERING, REPLACING */
  uint32_t corrected_reads;
  uint64_t events;
};
struct raid_status {
  char name[33];
  char uuid[36];
  int level;
  uint32_t layout;
  uint64_t chunk_bytes;
  unsigned members;
  uint64_t array_bytes, member_bytes;
  bool failed;
  bool synced;                  /* redundancy complete: no resync due */
  bool clean;                   /* md's clean: no write in flight */
  uint64_t events;
  unsigned ndevices;
  struct raid_device_status dev[2 * RAID_MAX_MEMBERS];
  enum raid_job_kind job;
  int job_target;
  uint64_t job_done, job_total;       /* bytes of each member */
  uint64_t mismatches;                /* sectors, after check/repair */
  uint64_t last_work_bytes;           /* of each member, last resync or
                                       * recovery */
  uint64_t bitmap_chunk_bytes;        /* 0: no bitmap */
  uint64_t bitmap_chunks, bitmap_dirty;
};
void raid_get_status (struct raid_array *a, struct raid_status *st);
/* The nested arrays among a's members (up to max of them). */
unsigned raid_children (struct raid_array *a, struct raid_array **out,
                        unsigned max);
/* The top array of nested ones: its free shared spares (up to max). */
unsigned raid_shared_spares (struct raid_array *a, const char **out,
                             unsigned max);
const char *raid_name (const struct raid_array *a);
/* The array named name: a itself or one nested in it; NULL if none. */
struct raid_array *raid_find_array (struct raid_array *a, const char *name);
/* The array a device (path or URI) serves in: a or one nested in it;
 * NULL if none. */
struct raid_array *raid_array_holding (struct raid_array *a,
                                       const char *path);

/* Admin verbs.  MEMBER is a role number or a device's path or URI.
 * Each returns 0, or -1 with a one-line reason in err, changing
 * nothing. */
int raid_admin_fail (struct raid_array *a, const char *member, bool force,
                     char *err, size_t errlen);
/* The removed device's path goes into removed (a role number names no
 * line of the config). */
int raid_admin_remove (struct raid_array *a, const char *member,
                       char *removed, size_t removedlen, char *err,
                       size_t errlen);
/* A new device becomes a spare (a recovery starts if a role is empty). */
int raid_admin_add (struct raid_array *a, const char *path, char *err,
                    size_t errlen);
/* Rebuild MEMBER's contents onto a new device (with, or a spare if
 * NULL) while MEMBER keeps serving; then swap them. */
int raid_admin_replace (struct raid_array *a, const char *member,
                        const char *with, char *err, size_t errlen);
/* Bring back a member that dropped out (mdadm --re-add): with a usable
 * bitmap only the regions written meanwhile are recovered. */
int raid_admin_readd (struct raid_array *a, const char *member, char *err,
                      size_t errlen);
/* The top array of nested ones: a new device joins the shared spares. */
int raid_admin_add_shared (struct raid_array *a, const char *path,
                           char *err, size_t errlen);

/* nbdraid create: write md v1.2 superblocks for cfg on every member and
 * spare.  Unless assume_clean, the array is marked not in sync and the
 * server makes parity and mirrors consistent in the background.
 * Nothing is written until every check has passed. */
struct raid_create_options {
  bool assume_clean;
  bool force;                   /* overwrite existing md superblocks */
  /* Reorder the members (and the config file's member lines) so the
   * array survives the loss of any one controller, if it can. */
  bool arrange;
  /* Refuse an array that does not survive a controller loss. */
  bool strict_controllers;
  raid_log_fn log;              /* notes (RAID_LOG_INFO) */
  void *log_opaque;
};
int raid_create (struct raid_config *cfg,
                 const struct raid_create_options *opts,
                 char *err, size_t errlen);

#endif
