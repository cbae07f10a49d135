/* nbdraid: the engine's public API, the only engine header the plugin
 * and the nbdraid tool include.
 *
 * The config file, read into a struct raid_config; the level table; a
 * handful of verbs on an array handle: assemble it from a config, start
 * its I/O threads, read, write, zero, flush, map extents, close; its
 * background jobs, status and admin verbs; creating an array, and
 * examining a member.  Every call returns 0 or -1 with errno set, or a
 * one-line reason in err; what went wrong inside an array is also
 * reported, with the member and offset, through the log callback.
 */
#ifndef NBDRAID_RAID_H
#define NBDRAID_RAID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Members of one array, at most. */
#define RAID_MAX_MEMBERS 128

/* ---- the config file (raid/format/config-file.c) ------------------ */

/* nbd-connections, nbd-timeout and nbd-connect-timeout when the config
 * does not set them; nbdraid examine and zero-superblock, which read no
 * config, reach an NBD device within the same timeouts. */
#define RAID_NBD_CONNECTIONS 4
#define RAID_NBD_TIMEOUT_S 30
/* Multi-host protection: the owner record is renewed this often. */
#define RAID_HEARTBEAT_MS 1000
#define RAID_NBD_CONNECT_TIMEOUT_S 10
/* The most a member operation may take once the server is stopping. */
#define RAID_STOP_TIMEOUT_S 5
/* read-ahead when the config does not set it: this much where a member
 * waits (NBD, direct), none on the page cache, which reads ahead. */
#define RAID_READ_AHEAD_AUTO UINT64_MAX
#define RAID_READ_AHEAD_BYTES (8 * 1024 * 1024)
#define RAID_READ_AHEAD_MAX (1024 * 1024 * 1024)

/* A member line of "missing" (mdadm's word) keeps a role that no
 * device holds: nbdraid remove writes it in place of a member's path,
 * so the lines still count the array's roles. */
#define RAID_MEMBER_MISSING "missing"

/* md's device flags (the superblock's devflags): a write-mostly copy
 * is read only when no other can serve; a failfast one is failed at
 * its first error, not repaired or retried, unless it is the last. */
#define RAID_DEVFLAG_WRITE_MOSTLY 1
#define RAID_DEVFLAG_FAILFAST 2

/* md's write-behind limit: mdadm's value when given none, and md's
 * most (COUNTER_MAX, md-bitmap.h). */
#define RAID_WRITE_BEHIND_DEFAULT 256
#define RAID_WRITE_BEHIND_MAX 16383

struct raid_member_spec {
  char *path;                   /* absolute path (or URI), or "missing" */
  char *controller;             /* NULL when not given */
  uint8_t devflags;             /* RAID_DEVFLAG_* given on its line */
  int line;
  bool missing;                 /* a role no device holds */
};

struct raid_config {
  char *file;
  char *name;
  int level;
  uint32_t layout;
  uint64_t chunk_bytes;         /* 0 for RAID1 */
  bool direct;
  char *controllers;            /* declared names, or NULL: any */
  char *socket;                 /* control socket, or NULL: the default */
  bool bitmap;                  /* an internal write-intent bitmap */
  int bitmap_line;              /* where 'bitmap' was set, or 0 */
  /* md's consistency-policy ppl: a partial parity log closes RAID5's
   * write hole instead of a bitmap. */
  bool ppl;
  int ppl_line; /* of consistency-policy, whichever */
  /* md's consistency-policy journal (RAID5/6): every stripe update is
   * logged on a journal device before the members see it; the device
   * is [members] journal = PATH|URI. */
  bool journal;
  char *journal_path;
  int journal_line;             /* of journal = */
  /* journal-mode = write-back: writes are acknowledged once in the
   * journal and written to the members later (md's r5c cache). */
  bool journal_write_back;
  int journal_mode_line;
  uint64_t bitmap_chunk_bytes;  /* 0: mdadm's default */
  int bitmap_chunk_line;
  bool auto_readd;              /* re-add members that come back */
  /* md's write-behind (RAID1 with a bitmap and a write-mostly copy):
   * writes outstanding on the write-mostly copies at most, 0 for none
   * (they are then written as the others). */
  unsigned write_behind;
  int write_behind_line;
  /* Arrays of one server with the same spare-group lend each other
   * their spares (mdadm's spare-group); NULL: none. */
  char *spare_group;
  uint64_t speed_min;           /* background work, bytes per second */
  uint64_t speed_max;           /* 0: unlimited */
  /* Scheduled checks: one run every check_interval_s (0: none), each
   * for at most check_budget_s (0: to the end), continuing where the
   * last stopped, as mdcheck does; its position kept in state_dir
   * (NULL: the default, raid_config_state_path). */
  uint64_t check_interval_s, check_budget_s;
  char *state_dir;
  /* Fail a member once checks have found this many sectors of wrong
   * data on it (0: never). */
  uint64_t scrub_fail_after;
  /* Multi-host protection: the owner record's heartbeat (0: none). */
  uint64_t heartbeat_ms;
  /* Bytes read ahead of a sequential reader (0: none). */
  uint64_t read_ahead_bytes;
  unsigned nbd_connections;
  unsigned nbd_timeout_s;
  unsigned nbd_connect_timeout_s;
  int level_line;               /* where each was set (0: defaulted), */
  int layout_line;              /* for messages */
  int chunk_line;
  char *layout_name;            /* as written */
  /* Nested arrays: the arrays this one's "array:NAME" members name, in
   * [array NAME] / [members NAME] sections of the same file. */
  struct raid_config **groups;
  unsigned ngroups;
  struct raid_config *top;      /* a nested array's: the file's top one */
  int section_line;             /* of this array's [array ...] section */
  bool used;                    /* a group some array has as a member */
  struct raid_member_spec *members;     /* in role order */
  unsigned nmembers;
  struct raid_member_spec *spares;
  unsigned nspares;
  /* scan = GLOB lines: where to look for member and spare lines whose
   * device is not where the line says (raid_config_scan). */
  char **scan;
  unsigned nscan;
};

/* Parse and check a config file.  Returns 0, or -1 with a one-line
 * message naming file:line in err. */
int raid_config_load (const char *file, struct raid_config *cfg,
                      char *err, size_t errlen);
void raid_config_free (struct raid_config *cfg);

/* The nested array [array NAME] of top, or NULL. */
struct raid_config *raid_config_find_group (const struct raid_config *top,
                                            const char *name);

/* The control socket: [array] socket, or /run/nbdraid/NAME.sock for
 * root and for a user who owns /run/nbdraid (a service's
 * RuntimeDirectory), and $XDG_RUNTIME_DIR/nbdraid/NAME.sock (or
 * /tmp/nbdraid-UID/) for others.  Writes it into buf. */
void raid_config_socket_path (const struct raid_config *cfg, char *buf,
                              size_t len);

/* Where the array with set UUID uuid ("8c1f..." as status prints it)
 * keeps what lasts across restarts (a check's position): in [array]
 * state-dir, or /var/lib/nbdraid for root and $XDG_STATE_HOME/nbdraid
 * (or ~/.local/state/nbdraid) for others, as UUID.check.  Writes it
 * into buf. */
void raid_config_state_path (const struct raid_config *cfg, const char *uuid,
                             char *buf, size_t len);

/* "90", "90s", "10m", "6h", "2d", "1w": seconds.  0, or -1 if bad. */
int raid_parse_duration (const char *s, uint64_t *seconds);
/* The same in milliseconds, "ms" allowed ("200ms", "1s"). */
int raid_parse_duration_ms (const char *s, uint64_t *ms);

/* Add a "spare = PATH" line to the config file, or drop the line
 * naming PATH (a spare's is commented out, a member's says missing):
 * the server keeps the config in step with nbdraid add and remove.  0,
 * or -1 with err. */
int raid_config_add_spare (const struct raid_config *cfg, const char *path,
                           char *err, size_t errlen);
/* After nbdraid re-add: the member line a remove made say missing for
 * PATH ("member = missing ... # removed by nbdraid: PATH") names PATH
 * again.  0, or -1 with err (no such line: the device would not be
 * found at the next start). */
int raid_config_restore_device (const struct raid_config *cfg, const char *path,
                                char *err, size_t errlen);
int raid_config_drop_device (const struct raid_config *cfg, const char *path,
                             char *err, size_t errlen);
/* After nbdraid grow --level: the [array] section's level, layout and
 * chunk lines say the new shape (a level without a layout or chunk has
 * those lines commented out), and cfg follows.  0, or -1 with err. */
int raid_config_set_level (struct raid_config *cfg, int level,
                           uint32_t layout, uint64_t chunk_bytes, char *err,
                           size_t errlen);
/* After nbdraid grow --raid-devices or --level: paths (one a line)
 * are the spares that took new roles (their lines become member
 * lines), the roles dropped (their member lines, or lines saying
 * missing, are commented out), or members that became spares (their
 * lines become spare lines; "missing" for a role no device held: its
 * line is commented out).  0, or -1 with err. */
enum raid_role_change {
  RAID_ROLES_PROMOTE,
  RAID_ROLES_DROP,
  RAID_ROLES_DEMOTE,
};
int raid_config_change_roles (const struct raid_config *cfg,
                              const char *paths, enum raid_role_change how,
                              char *err, size_t errlen);

/* ---- levels (raid/format/level.c) -------------------------------- */

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

/* ---- arrays ------------------------------------------------------ */

/* A member as the config names it: a path, an NBD URI (nbd://,
 * nbds://, nbd+unix://, nbds+unix://, in any case), or "array:NAME"
 * for the nested array NAME. */
bool raid_spec_is_uri (const char *spec);
/* The NAME of an "array:NAME" spec, or NULL. */
const char *raid_spec_array (const char *spec);

struct raid_array;

/* What the engine logs: DEBUG for developers; INFO for routine events
 * (a recovery started or finished, a spare added); WARNING for an
 * array that runs at risk (degraded, or lost with one controller);
 * ERROR for what failed (a member, a request). */
enum raid_log_level {
  RAID_LOG_DEBUG, RAID_LOG_INFO, RAID_LOG_WARNING, RAID_LOG_ERROR,
};
typedef void (*raid_log_fn) (void *opaque, enum raid_log_level level,
                             const char *msg);

/* Events a monitor hears, with mdadm --monitor's names and meanings
 * (raid_event_name: "Fail", "Rebuild20", ...); ours where mdadm has
 * none (FailedArray, MismatchLocated). */
enum raid_event {
  RAID_EVENT_FAIL,              /* a member failed */
  RAID_EVENT_FAIL_SPARE,        /* a spare being rebuilt into a role failed */
  RAID_EVENT_DEGRADED_ARRAY,    /* found running without a member (at
                                   assembly, or when a monitor starts) */
  RAID_EVENT_FAILED_ARRAY,      /* ours: more lost than the level
                                   tolerates */
  RAID_EVENT_SPARES_MISSING,    /* fewer spares than the config lists */
  RAID_EVENT_REBUILD_STARTED,   /* a recovery, resync, check or repair
                                   began; detail: which */
  RAID_EVENT_REBUILD20,         /* the rebuild passed 20% */
  RAID_EVENT_REBUILD40,
  RAID_EVENT_REBUILD60,
  RAID_EVENT_REBUILD80,
  RAID_EVENT_REBUILD_FINISHED,  /* it ended; a check's or repair's detail:
                                   "mismatches found: N (on raid level
                                   L)", as mdadm's */
  RAID_EVENT_SPARE_ACTIVE,      /* a rebuilt member joined the array */
  RAID_EVENT_MOVE_SPARE,        /* a shared spare went to a nested array;
                                   detail: the top array */
  RAID_EVENT_MISMATCH_LOCATED,  /* ours: a check found wrong bytes on
                                   member; detail: sectors (after its
                                   RebuildFinished) */
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
  /* Take the array from a server whose heartbeat is on the members
   * without waiting to see it stop: the admin fenced that host. */
  bool force;
  /* Start a RAID5/6 that is both dirty (not stopped cleanly) and
   * degraded, without a partial parity log (md's start_dirty_degraded):
   * the missing member's blocks of stripes in flight may come back
   * wrong. */
  bool start_dirty_degraded;
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
/* scan = GLOB (mdadm --assemble --scan): each member or spare line of
 * cfg (and its nested arrays) whose path holds no device of the array
 * gets a device the globs match that carries the array's UUID, logged
 * as info.  0, or -1 with a one-line reason in err (the globs find two
 * arrays of cfg's name). */
int raid_config_scan (struct raid_config *cfg, raid_log_fn log,
                      void *opaque, char *err, size_t errlen);
/* Start the member I/O threads.  Returns 0 or -1 with errno set. */
int raid_start (struct raid_array *a);
/* The server is stopping: from now on every member operation gives up
 * after RAID_STOP_TIMEOUT_S at most, so that members whose servers went
 * away (each operation retried for the whole nbd-timeout) do not hold
 * the stop up past a service manager's patience.  What cannot be
 * written then (a clean mark) only costs a resync at the next start.
 * Call before the last flush and raid_close. */
void raid_stopping (struct raid_array *a);
void raid_close (struct raid_array *a);

/* What the superblocks say the array is. */
struct raid_shape {
  int level;                    /* md's */
  uint32_t layout;
  unsigned members;
  uint64_t chunk_bytes;         /* 0 for a level without a chunk */
  uint64_t array_bytes;
  /* Requests split at units: the chunk, or RAID1's 128K. */
  uint64_t unit_bytes;
  /* One full stripe's data: the write size with no read-modify-write. */
  uint64_t stripe_bytes;
};
void raid_get_shape (const struct raid_array *a, struct raid_shape *shape);
uint64_t raid_size (const struct raid_array *a);
/* Whether the superblocks say the array was stopped cleanly (md's
 * resync_offset all ones). */
bool raid_clean (const struct raid_array *a);

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
  RAID_JOB_NONE,
  RAID_JOB_RESYNC,
  RAID_JOB_RECOVERY,
  RAID_JOB_CHECK,
  RAID_JOB_REPAIR,
  RAID_JOB_REPLACE,
  RAID_JOB_RESHAPE,
};
/* How many kinds there are, for a walk over them all. */
#define RAID_JOB_KINDS (RAID_JOB_RESHAPE + 1)
const char *raid_job_name (enum raid_job_kind kind);

/* Do up to budget bytes (at most RAID_JOB_STEP_MAX) of member I/O of
 * background work.  Returns 1 if there is more to do, 0 if there is
 * nothing, -1 on error.  A step's stripes stay locked until it ends,
 * and every step starts and drains the workers, leaving cores idle at
 * its end: the size weighs the two (client-tests/bench/FINDINGS.md). */
#define RAID_JOB_STEP_MAX (16 * 1024 * 1024)
int raid_job_step (struct raid_array *a, uint64_t budget);
/* Start a check (or repair) of every stripe from byte `from` of each
 * member's data area on (0: all of it; else where an earlier one
 * stopped, as raid_job_progress said); refused while another job
 * runs.  0, or -1 with a one-line reason in err. */
int raid_job_check (struct raid_array *a, bool repair, uint64_t from,
                    char *err, size_t errlen);
/* Stop a check or repair (mdadm's idle). */
int raid_job_idle (struct raid_array *a, char *err, size_t errlen);
/* The current job and how far it is, in bytes of each member. */
void raid_job_progress (struct raid_array *a, enum raid_job_kind *kind,
                        uint64_t *done, uint64_t *total);
/* Client I/O so far, in bytes (background work yields to it). */
uint64_t raid_client_bytes (const struct raid_array *a);

/* Client requests since assembly: the raid_read, raid_write and
 * raid_zero calls that passed their checks (in range, array alive,
 * writable).  A nested array counts the requests of the array above
 * it, whose background work is among them. */
struct raid_requests {
  uint64_t reads, read_bytes;
  uint64_t writes, write_bytes;
  uint64_t zeroes, zero_bytes;
  uint64_t failed;              /* of them, those that returned -1 */
  uint64_t busy_ns;             /* their time from entry to return, summed */
  /* Reads served from read-ahead windows, and the bytes the windows
   * read from the array. */
  uint64_t read_ahead_hits, read_ahead_bytes;
};

/* The picture `nbdraid status` draws. */
enum raid_device_state {
  RAID_DEV_ACTIVE, RAID_DEV_RECOVERING, RAID_DEV_FAULTY, RAID_DEV_MISSING,
  RAID_DEV_SPARE, RAID_DEV_REPLACING,
};
#define RAID_DEV_STATES (RAID_DEV_REPLACING + 1)
/* "active", "recovering", ...: the word status shows. */
const char *raid_device_state_name (enum raid_device_state state);
struct raid_device_status {
  int role;                     /* -1 outside the roles */
  enum raid_device_state state;
  char path[256];
  char controller[64];
  char why[256];
  uint64_t recovered_bytes;     /* RECOVERING, REPLACING */
  uint32_t corrected_reads;
  /* Sectors checks found wrong on this device since the array was
   * assembled (the redundancy named it). */
  uint64_t mismatched_sectors;
  uint64_t events;
  /* Its path no longer names the device it was (mdadm's "detached"). */
  bool detached;
  uint8_t devflags;             /* RAID_DEVFLAG_*, as its superblock says */
  /* Its average read time lately (ns; 0 before its first read), and
   * whether the mirror now reads it only when no other copy can, for
   * being far slower than the fastest of the copies beside it
   * (read-latency.c). */
  uint64_t read_ns;
  bool slow;
};
struct raid_status {
  char name[33];
  char uuid[36];
  uint64_t ctime, utime;        /* creation, last superblock update
                                   (seconds since the epoch) */
  int level;
  uint32_t layout;
  uint64_t chunk_bytes;
  unsigned members;
  uint64_t array_bytes, member_bytes;
  bool failed;
  bool synced;                  /* redundancy complete: no resync due */
  bool clean;                   /* md's clean: no write in flight */
  bool readonly;                /* client writes refused */
  uint64_t events;
  unsigned ndevices;
  struct raid_device_status dev[2 * RAID_MAX_MEMBERS];
  enum raid_job_kind job;
  int job_target;
  uint64_t job_done, job_total;       /* bytes of each member */
  /* A reshape under way: the shape it changes from (level, layout,
   * chunk_bytes and members above are the new one). */
  struct raid_reshape_from {
    bool active;
    unsigned members;
    uint32_t layout;
    uint64_t chunk_bytes;
  } reshape_from;
  uint64_t mismatches;                /* sectors, after check/repair */
  uint64_t unlocated;                 /* of them, on no one member */
  uint64_t last_work_bytes;           /* of each member, last resync or
                                       * recovery */
  uint64_t bitmap_chunk_bytes;        /* 0: no bitmap */
  uint64_t bitmap_chunks, bitmap_dirty;
  /* md's consistency policy: none, resync, bitmap, ppl or journal. */
  const char *policy;
  /* With a write journal: its device, "active", "faulty" (writes are
   * refused) or "missing" (assembled read-only without it), why, its
   * ring, the bytes its log holds and the tail (sectors from its data
   * offset). */
  char journal_path[256];
  const char *journal_state;
  char journal_why[256];
  uint64_t journal_bytes, journal_used_bytes, journal_tail_sectors;
  /* Its mode, "write-through" or "write-back", and with write-back the
   * bytes cached (not yet on the members) and the cache's limit. */
  const char *journal_mode;
  uint64_t journal_cached_bytes, journal_cache_limit;
  /* write-behind: md's limit (0: off); the behind-writes not yet on
   * the write-mostly members, and what they count against the limit
   * (once per MiB or part, as md counts). */
  unsigned behind_limit, behind_writes, behind_slots;
  struct raid_requests requests;
};
void raid_get_status (struct raid_array *a, struct raid_status *st);
/* Roles whose device is active (mdstat's [n/m]): fewer than members is
 * degraded. */
unsigned raid_status_working (const struct raid_status *st);
/* The nested arrays among a's members (up to max of them). */
unsigned raid_children (struct raid_array *a, struct raid_array **out,
                        unsigned max);
/* The top array of nested ones: its free shared spares (up to max). */
unsigned raid_shared_spares (struct raid_array *a, const char **out,
                             unsigned max);
const char *raid_name (const struct raid_array *a);
/* Change the level without moving data, as md's takeovers do
 * (mdadm --grow --level): a 2-member RAID1 to RAID5 and back, a RAID5
 * to RAID6 with one more member (a spare, rebuilt as Q) and back (Q's
 * device left a spare), a RAID0 to RAID4 or parity-last RAID5 with one
 * more member (a spare, rebuilt as parity) and back, RAID4 to
 * parity-last RAID5 and back.  changed gets the path whose config line
 * changes: the spare that became Q or parity, or the device that
 * became a spare ("missing" for a parity role no device held). */
int raid_admin_takeover (struct raid_array *a, const char *level,
                         char *changed, size_t changedlen, char *done,
                         size_t donelen, char *err, size_t errlen);
/* Its member count: the roles, raid_disks. */
unsigned raid_members (const struct raid_array *a);
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
/* Read-only at run time (mdadm --readonly): client writes fail with
 * EROFS once those in flight have ended, the array is marked clean and
 * nothing more is written to its members, background work paused;
 * readonly false undoes it (not for an array assembled read-only).
 * Not kept across a restart. */
int raid_admin_readonly (struct raid_array *a, bool readonly, char *err,
                         size_t errlen);
/* Use more of each member once all are bigger (mdadm --grow --size):
 * size is "max" (the most the smallest member allows) or the bytes
 * each member gives the array, rounded down to the chunk (RAID1: 64K).
 * The new space is resynced in the background; new connections see
 * the new size.  What was done goes into done. */
int raid_admin_grow (struct raid_array *a, const char *size, char *done,
                     size_t donelen, char *err, size_t errlen);
/* Serve only the first size bytes of the array (mdadm --grow
 * --array-size), or all of them again ("max"): before a shrink to
 * fewer members.  Not kept across a restart; new connections see the
 * new size, requests past it fail with ENOSPC. */
int raid_admin_array_size (struct raid_array *a, const char *size, char *done,
                           size_t donelen, char *err, size_t errlen);
/* Add or drop mirrors of a RAID1 (mdadm --grow --raid-devices): more
 * are filled from the array's spares and recovered; fewer needs the
 * roles to drop empty (failed and removed).  changed gets the paths
 * whose config lines change (raid_config_change_roles), one a line. */
int raid_admin_grow_devices (struct raid_array *a, const char *count,
                             char *changed, size_t changedlen, char *done,
                             size_t donelen, char *err, size_t errlen);
/* nbdraid grow --chunk SIZE or --layout NAME (option) on a RAID5/6:
 * a reshape into the new shape starts, as for more members. */
int raid_admin_grow_shape (struct raid_array *a, const char *option,
                           const char *value, char *done, size_t donelen,
                           char *err, size_t errlen);
/* nbdraid grow --level 6 --layout NAME on a RAID5 (mdadm --grow
 * --level=6 without --layout=preserve): a spare takes the new last
 * role, Q, and a reshape restripes the array into a RAID6 of layout
 * NAME, P and Q written whole.  changed gets the spare's path. */
int raid_admin_grow_raid6 (struct raid_array *a, const char *layout,
                           char *changed, size_t changedlen, char *done,
                           size_t donelen, char *err, size_t errlen);
/* Whether client writes are refused now (EROFS). */
bool raid_readonly (const struct raid_array *a);
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

/* ---- examining members and configs -------------------------------- */

/* md v1.2's most devices in one array (max_dev). */
#define RAID_MD_MAX_DEV 1920

/* What a member's md superblock, and its bitmap, say (nbdraid examine,
 * as mdadm --examine). */
struct raid_member_info {
  uint32_t feature_map;
  char uuid[37];                /* the array's */
  char name[33];
  uint64_t ctime, utime;        /* seconds since the epoch */
  int level;
  uint32_t layout;
  unsigned raid_disks;
  uint64_t chunk_bytes;
  uint64_t data_size_sectors;   /* the member's data area (avail) */
  uint64_t size_sectors;        /* of it, what the array uses */
  uint64_t data_offset_sectors, super_offset_sectors;
  bool clean;
  /* Where a resync stopped (all ones: none due), and where a recovery
   * of this device stopped (valid with has_recovery_offset). */
  uint64_t resync_offset_sectors, recovery_offset_sectors;
  bool has_recovery_offset;
  int32_t bitmap_offset_sectors;        /* from the superblock */
  char device_uuid[37];
  /* sb_csum as read, and what it should be (they differ only when
   * raid_examine gives 1). */
  uint32_t checksum, checksum_expected;
  uint8_t devflags;             /* RAID_DEVFLAG_* */
  uint64_t events;
  uint32_t corrected_reads;
  unsigned dev_number;
  /* md's role of the device: a role number, or a special value that
   * role_name names ("spare", "faulty", "journal"; NULL for a role). */
  unsigned role;
  const char *role_name;
  /* 'A' for each role some device fills, '.' for one none does. */
  char array_state[RAID_MD_MAX_DEV + 1];
  /* md's dev_roles: the role this superblock gives each device number,
   * max_dev of them (raid_member_role reads them). */
  unsigned max_dev;
  uint16_t dev_roles[RAID_MD_MAX_DEV];
  uint64_t array_bytes;
  /* The write-intent bitmap: its header and dirty bits, or why they
   * could not be read (bitmap_why not empty). */
  bool has_bitmap;
  /* A partial parity log: sectors from the superblock, and long. */
  bool has_ppl;
  int ppl_offset_sectors;
  unsigned ppl_size_sectors;
  /* md's write journal; on the journal device, its log's tail (sectors
   * from its data offset). */
  bool has_journal;
  bool journal_device;
  uint64_t journal_tail_sectors;
  char bitmap_why[256];
  uint32_t bitmap_chunk_bytes;
  uint64_t bitmap_events, bitmap_events_cleared;
  uint64_t bitmap_chunks, bitmap_dirty;
  uint32_t bitmap_write_behind; /* md's write-behind limit, 0: none */
  /* The owner record beside the superblock (multi-host protection):
   * the server that serves the array, or served it last. */
  bool has_owner;
  bool owner_serving;           /* false: it stopped cleanly */
  char owner_host[65];
  uint32_t owner_pid;
  uint32_t owner_interval_ms;
  uint64_t owner_time_ms;       /* its last heartbeat, by its clock */
  uint64_t owner_seq;           /* heartbeats it wrote */
};
/* Read spec's superblock (and bitmap).  0; or -1 with a one-line reason
 * (naming spec) in err, errno ENODATA when spec holds no md superblock
 * at all, as against a damaged one or a device that cannot be read; or
 * 1 when only the superblock's checksum is wrong: err says so, and info
 * describes the superblock all the same, as mdadm --examine does. */
int raid_examine (const char *spec, struct raid_member_info *info,
                  char *err, size_t errlen);

/* The role the superblock ref (the freshest of an array: md judges
 * every device by it) gives the device m describes, as assembly
 * places it; a device ref does not know keeps the role of its own.
 * *name is NULL for a role number, else "spare", "faulty" or
 * "journal". */
unsigned raid_member_role (const struct raid_member_info *ref,
                           const struct raid_member_info *m,
                           const char **name);

/* As raid_examine, for the array cfg describes as a whole: assemble it
 * read-only (degraded if need be) and read the superblock at the start
 * of its data, where the array it is a member of keeps one (a RAID50's
 * groups hold the RAID0's).  err also says why cfg would not assemble
 * (errno then is not ENODATA). */
int raid_examine_array (const struct raid_config *cfg,
                        struct raid_member_info *info, char *err,
                        size_t errlen);

/* Write zeros over spec's md superblock (mdadm --zero-superblock): 0, or
 * -1 with a one-line reason in err, naming spec: it holds none, or an
 * array running here is using it (nothing is written then). */
int raid_zero_superblock (const char *spec, char *err, size_t errlen);

/* Where cfg's members sit on controllers (into list: each controller
 * and its count of members, "c0 (3), c1 (3)"), and whether the array
 * survives the loss of any one: 1 yes, 0 no (why names the controller
 * and the roles it takes), -1 no member names a controller, -2 the
 * config's geometry is not one the engine serves (why says so). */
int raid_controllers_report (const struct raid_config *cfg, char *list,
                             size_t listlen, char *why, size_t whylen);

#endif
