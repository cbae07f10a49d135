/* nbdraid: the array's state, shared by the engine's own files.
 * Users of the engine include raid.h instead.
 */
#ifndef NBDRAID_ARRAY_H
#define NBDRAID_ARRAY_H

#include "bitmap.h"
#include "io-batch.h"
#include "iopool.h"
#include "read-ahead.h"
#include "journal.h"
#include "member-set.h"
#include "member.h"
#include "owner.h"
#include "ppl.h"
#include "raid.h"
#include "reshape.h"
#include "retired.h"
#include "scratch.h"
#include "range-lock.h"
#include "stripe-lock.h"
#include "superblock.h"
#include "write-behind.h"

enum slot_state {
  SLOT_ACTIVE,                  /* in sync, used for reads and writes */
  SLOT_RECOVERING,              /* being rebuilt: in sync below `front` */
  SLOT_FAULTY,                  /* failed (now or before assembly) */
  SLOT_MISSING,                 /* absent, blank, or stale: needs recovery */
};

/* A role in the array, or a device outside the roles (a spare, or a
 * stale or failed device the config lists). */
struct raid_slot {
  struct member *io;            /* NULL when missing */
  char *path;                   /* as configured */
  char *controller;
  struct md_superblock sb;
  uint64_t data_offset_bytes;
  int state;                    /* enum slot_state; read with slot_state() */
  uint64_t front;               /* RECOVERING: bytes of data area rebuilt */
  bool partial;                 /* RECOVERING: re-added, bitmap-guided */
  uint64_t readd_tried_ms;      /* auto-readd: the last attempt */
  bool heartbeat_failed;        /* its last owner record write failed */
  /* Sectors checks found wrong on it since assembly (atomic). */
  uint64_t mismatched_sectors;
  char why[256];                /* why it is not active */
};

/* What a family of levels does with a request (raid/levels/: the
 * array core calls these, assembly picks them from the levels table). */
struct raid_level_ops {
  /* The family's own state for array a (a->level_state): 0, or -1 with
   * the reason in err.  teardown frees it. */
  int (*setup) (struct raid_array *a, char *err, size_t errlen);
  void (*teardown) (struct raid_array *a);
  /* Lock granule: stripes for parity, units for the copies family. */
  uint64_t (*lock_key) (const struct raid_array *a, uint64_t unit);
  int (*read) (struct raid_array *a, uint8_t *buf, uint64_t count,
               uint64_t offset);
  /* buf == NULL writes zeros, deallocating where the level can. */
  int (*write) (struct raid_array *a, const uint8_t *buf, uint64_t count,
                uint64_t offset);
  /* Where array unit `unit` can be read directly: member and data-area
   * offset of its first byte. */
  void (*locate) (const struct raid_array *a, uint64_t unit,
                  unsigned *member, uint64_t *member_off);
  /* Redundancy: units (stripes, or array units for copies) to resync,
   * and resync of n of them; *done counts those that needed it (units
   * in holes on every member are consistent as they are). */
  uint64_t (*sync_units) (const struct raid_array *a);
  int (*sync) (struct raid_array *a, uint64_t first, uint64_t n,
               uint64_t *done);
  /* The sync unit holding array byte offset (for the bitmap). */
  uint64_t (*sync_unit_of) (const struct raid_array *a, uint64_t offset);
  /* What member m should hold at [off, off+len) of its data area, from
   * the members not in gone (m must be in gone).  For recovery; the
   * level may use scratch for its buffers and leave it for next time. */
  int (*reconstruct) (struct raid_array *a, unsigned m, uint64_t off,
                      uint64_t len, const struct member_set *gone,
                      uint8_t *out, struct scratch *scratch);
  /* Is every byte reconstruct would read for [off, off+len) of member
   * m in a hole of its member, so that m should hold zeros there? */
  bool (*unwritten) (struct raid_array *a, unsigned m, uint64_t off,
                     uint64_t len, const struct member_set *gone);
  /* The lock keys of member m's units [first, last], for recovery:
   * calls fn for each. */
  void (*member_keys) (const struct raid_array *a, unsigned m,
                       uint64_t first, uint64_t last,
                       void (*fn) (void *opaque, uint64_t key),
                       void *opaque);
  /* Check (and with repair, fix) redundancy of sync units
   * [first, first+n); adds mismatched sectors to *mismatches. */
  int (*check) (struct raid_array *a, uint64_t first, uint64_t n,
                bool repair, uint64_t *mismatches);
  /* Does the family now read member m only when no other copy can, for
   * its read time?  NULL: it never judges that (parity levels). */
  bool (*read_slow) (const struct raid_array *a, unsigned m);
  /* Write the write-back cache's pages of stripe `stripe` to the
   * members and drop them from it (journal-cache.h); parity levels. */
  int (*destage) (struct raid_array *a, uint64_t stripe);
};

/* The background job, driven by raid_job_step (job.c). */
struct raid_job {
  enum raid_job_kind kind;
  unsigned target;              /* RECOVERY, REPLACE: the role rebuilt */
  unsigned spare;               /* REPLACE: the spare rebuilt onto */
  uint64_t pos, end;            /* in sync units, or target bytes */
  uint64_t mismatches;          /* CHECK/REPAIR: sectors */
  /* CHECK/REPAIR: of them, sectors the redundancy pinned on one role,
   * by role, and those it could not pin on any (atomic). */
  uint64_t located[RAID_MAX_MEMBERS];
  uint64_t unlocated;
  unsigned logged;              /* mismatches logged one by one */
  uint64_t checkpointed;        /* pos at the last checkpoint */
  uint64_t checkpointed_ms;     /* RECOVERY, REPLACE: and when (now_ms) */
  uint64_t started_at;          /* pos when this run started */
  bool partial;                 /* RECOVERY: only regions the bitmap marks */
  uint64_t work_bytes;          /* bytes actually resynced or rebuilt */
};

/* The workers of a rebuild, resync or check, a few per core and at
 * most this many, take the pieces of a window in turn (job.c). */
#define JOB_WORKERS_MAX 8

/* What each worker keeps from one window to the next while a rebuild
 * runs: the piece it rebuilds, and the level's own buffers (the other
 * members'). */
struct job_buffers {
  struct scratch out[JOB_WORKERS_MAX], level[JOB_WORKERS_MAX];
};

struct raid_array {
  char name[33];
  struct raid_geometry geo;
  const struct raid_level_ops *ops;
  void *level_state;            /* the family's own (ops->setup) */
  struct raid_slot *slots;      /* by role: geo.members of them */
  struct raid_array **children;  /* nested arrays among the members */
  unsigned nchildren;
  /* The top array of nested ones: the pool of shared spares no nested
   * array has taken yet (shared-spares.c). */
  char **shared;
  unsigned nshared;
  struct raid_slot *spares;     /* devices outside the roles */
  unsigned nspares;
  struct retired retired;       /* devices that left, closed when unused */
  /* No member is written: assembled read-only (member_opts.readonly:
   * the members are open read-only) or made read-only since (nbdraid
   * readonly; dirty.c). */
  bool readonly;
  /* Client writes fail with EROFS.  Set with readonly, but first when
   * the array is made read-only at run time: the writes in flight
   * drain and the array is marked clean before readonly stops every
   * member write. */
  bool refuse_writes;
  /* Client writes wait before they start (nbdraid grow: dirty.c). */
  bool hold_writes;
  /* Every request waits at the engine's entry (a level change), and
   * those inside are counted (array.c). */
  bool hold_requests;
  uint64_t requests_in_flight;
  /* The levels table (assembly fills it): a level change picks the
   * new level's request paths from it. */
  const struct raid_level_ops *(*level_ops) (int md_level);
  bool direct;
  int failed;                   /* lost more members than it tolerates */
  uint64_t resync_front;        /* sync units in sync; all when clean */
  /* nbdraid grow --array-size (atomic): the bytes served, if fewer than
   * the geometry holds; 0 for all. */
  uint64_t size_limit;
  /* md's in_sync: no write in flight or recent, so the superblocks may
   * say clean (dirty.c). */
  int in_sync;
  uint64_t writes_in_flight;
  unsigned read_turn;           /* copies: which copy reads next */
  uint64_t last_write_ms;
  bool started;                 /* raid_start ran: stop cleanly */
  bool auto_readd;
  uint64_t scrub_fail_after;    /* sectors; 0: never (config) */
  struct member_open_options member_opts;      /* to reopen devices */
  struct raid_bitmap bitmap;
  struct raid_ppl ppl;          /* partial parity log (RAID5) */
  struct raid_journal journal;  /* write journal (RAID5/6) */
  struct raid_behind behind;    /* md's write-behind (write-behind.c) */
  /* A role being replaced (-1: none) and the spare replacing it: set
   * only with the array quiesced, so requests read them freely. */
  int replacing;
  unsigned replacement;
  pthread_mutex_t sb_lock;      /* superblocks, slots and the job */
  struct raid_job job;
  struct raid_reshape reshape;          /* a restriping grow (reshape.h) */
  struct job_buffers job_buffers;       /* the control thread's */
  uint64_t last_mismatches;     /* of the last check or repair */
  uint64_t last_unlocated;
  uint64_t last_work_bytes;     /* of the last resync or recovery */
  struct iopool *pool;
  /* Sequential readers' windows (read-ahead.h); read_ahead_bytes is
   * the config's, RAID_READ_AHEAD_AUTO for the default. */
  uint64_t read_ahead_bytes;
  struct read_ahead ra;
  uint64_t reading_bytes;       /* the client reads' in flight (atomic) */
  struct stripe_locks locks;
  struct range_lock write_ranges;       /* the copies family's writes */
  struct raid_requests requests;        /* atomic: array_requests reads it */
  /* Multi-host protection (multihost.c): our owner record, written
   * beside the superblocks every heartbeat_ms (0: never) while
   * claimed; owner_lost once another server took the array over. */
  uint64_t heartbeat_ms;
  struct owner_record owner;
  bool claimed;
  bool owner_lost;
  pthread_t heartbeat;
  bool heartbeat_running;
  bool heartbeat_stop;
  pthread_mutex_t heartbeat_lock;
  pthread_cond_t heartbeat_wake;
  raid_log_fn log;
  raid_event_fn event;
  void *log_opaque;
};

/* Run a batch, in parallel where its members wait (array.c: quick);
 * each op gets its own result.  An op on a member that cannot take it
 * (failed, or recovering and the op reaches above the rebuilt part)
 * fails with ENODEV.  Returns the number of ops that failed. */
size_t array_run (struct raid_array *a, struct io_batch *b);
/* Does m wait on a device or the network (NBD, direct), or, for a
 * nested array, do any of its members? */
bool array_member_waits (const struct member *m);
/* Set up and start read-ahead (requests.c), as the config and the
 * members say.  0, or -1 with errno set. */
int array_read_ahead_start (struct raid_array *a);
/* Is [off, off+len) of member m's data area known to be a hole
 * (member_ops is_hole)?  An error answers no: the caller then reads
 * it, and meets the error there. */
bool array_member_hole (struct raid_array *a, unsigned m, uint64_t off,
                        uint64_t len);
/* Online processors. */
unsigned array_cpus (void);
/* The client request counters, each read atomically. */
void array_requests (const struct raid_array *a, struct raid_requests *out);

static inline enum slot_state
slot_state (const struct raid_slot *s)
{
  return (enum slot_state) __atomic_load_n (&s->state, __ATOMIC_ACQUIRE);
}

static inline uint64_t
slot_front (const struct raid_slot *s)
{
  return __atomic_load_n (&s->front, __ATOMIC_ACQUIRE);
}

/* Which members a request may use, taken after its stripe locks: the
 * recovery front cannot move within stripes the request holds. */
#define VIEW_MAX_RECOVERING 4
struct members_view {
  struct member_set gone;       /* neither active nor recovering */
  unsigned nrec;
  unsigned rec[VIEW_MAX_RECOVERING];
  uint64_t front[VIEW_MAX_RECOVERING];
  int repl_role;                /* a role being replaced, or -1 */
  unsigned repl_index;          /* its replacement's op index */
  uint64_t repl_front;
};
void array_view (const struct raid_array *a, struct members_view *v);
/* The members not to use for data-area bytes ending at member_end. */
void view_gone (const struct members_view *v, uint64_t member_end,
                struct member_set *gone);
/* Whether member m may be used for data-area bytes ending at
 * member_end. */
bool view_usable (const struct members_view *v, unsigned m,
                  uint64_t member_end);
/* Add a write (or zero) to member, and to its replacement if one is
 * being built and already covers the range. */
int view_add_write (const struct members_view *v, struct io_batch *b,
                    enum io_kind kind, unsigned member, uint64_t off,
                    uint64_t len, void *buf);

/* job-sync.c: a check or repair found `sectors` of sync unit `unit`
 * (a stripe, or an array unit of the copies family) disagreeing, and
 * the redundancy says role m holds the wrong bytes, or cannot say (m
 * -1; suspects, if not NULL, the roles that disagree).  Counted against
 * the role, and logged. */
void array_note_mismatch (struct raid_array *a, uint64_t unit, int m,
                          const struct member_set *suspects,
                          uint64_t sectors);

/* Op index -> device: roles first, then a->spares. */
struct raid_slot *array_slot (struct raid_array *a, unsigned index);
/* The device whose superblock speaks for the array: of the roles' in
 * use, the one with the most events (role 0's slot if none is). */
struct raid_slot *array_reference (const struct raid_array *a);

/* member-array.c: array a as a member of another (spec "array:NAME");
 * the wrapper does not own it. */
struct member *member_array_open (struct raid_array *a, const char *spec,
                                  char *err, size_t errlen);
/* The array a member_array_open member stands for; NULL for others. */
struct raid_array *member_array_inner (const struct member *m);

/* assemble.c: assemble cfg, finding the nested arrays its "array:NAME"
 * members name among top's. */
struct raid_array *array_assemble (const struct raid_config *cfg,
                                   const struct raid_config *top,
                                   const struct raid_options *opts,
                                   char *err, size_t errlen);

/* job.c: rebuild spare's copy of role while the role keeps serving. */
void array_start_replace (struct raid_array *a, unsigned role,
                          unsigned spare);
void job_buffers_free (struct job_buffers *b);
/* Take spare i into empty role r, recovering from 0 (the job starts
 * when the scheduler next looks); the device that held the role stays
 * listed outside the roles, faulty, until the admin removes it.  With
 * the array quiesced and sb_lock held. */
void array_promote_spare (struct raid_array *a, unsigned i, unsigned r);
/* Can spare i take a role: active, and big enough for the array? */
bool array_spare_fits (const struct raid_array *a, unsigned i);
/* How many spares can take a role. */
unsigned array_usable_spares (const struct raid_array *a);
/* Role r, empty till now, goes to the first spare that can take it
 * (the caller counted one), recovering from 0; its path and a newline
 * go at the end of changed (the config line it changes).  With the
 * array quiesced and sb_lock held. */
void array_spare_takes_role (struct raid_array *a, unsigned r, char *changed,
                             size_t changedlen);

/* Flush the members (raid_flush, from inside the engine: no gate). */
int array_flush (struct raid_array *a);
/* Let no request into the engine, once those inside have left, and
 * let them in again (a level change). */
void array_hold_requests (struct raid_array *a);
void array_release_requests (struct raid_array *a);

/* Hold off every request (all stripe locks) while slots change. */
void array_quiesce (struct raid_array *a);
void array_unquiesce (struct raid_array *a);

/* Write why a verb refuses into err; returns -1, so that a verb may
 * end with return array_refuse (...). */
int array_refuse (char *err, size_t errlen, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

void array_log (const struct raid_array *a, enum raid_log_level level,
                const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));
void array_event (const struct raid_array *a, enum raid_event event,
                  int member, const char *detail);

/* Lock the granules of array units first..last. */
void array_lock_units (struct raid_array *a, uint64_t first, uint64_t last,
                       bool exclusive);
void array_unlock_units (struct raid_array *a, uint64_t first,
                         uint64_t last);

/* dirty.c: md's clean/dirty state around writes. */

/* Before a write of sync units first..last: mark the array dirty if it
 * was clean, and the bitmap regions.  0, or -1 if the array failed
 * (or is read-only: EROFS). */
int array_start_write (struct raid_array *a, uint64_t first, uint64_t last);
void array_end_write (struct raid_array *a, uint64_t first, uint64_t last);
/* One more hold on sync units first..last, inside a write that has
 * already marked them (a behind-write, which outlives its client
 * write): array_end_write gives it back. */
void array_hold_write (struct raid_array *a, uint64_t first, uint64_t last);
/* Safemode: once writes have stopped for a while, flush the members
 * and mark the superblocks clean. */
void array_mark_clean_when_quiet (struct raid_array *a);
/* Mark clean now, as at a stop; no write may be in flight. */
void array_mark_clean (struct raid_array *a);
/* Read-only at run time (writes drained, marked clean), and back. */
void array_make_readonly (struct raid_array *a);
void array_make_writable (struct raid_array *a);
/* Hold client writes back until those in flight have ended, and let
 * them go again (nbdraid grow). */
void array_hold_writes (struct raid_array *a);
void array_release_writes (struct raid_array *a);
/* The resync_offset the superblocks should carry now. */
uint64_t array_resync_offset (const struct raid_array *a);

/* multihost.c: who serves the array. */

/* At assembly, before anything is written: refuse (-1, the reason in
 * err) if another server's heartbeat moves on the members, or, with
 * force, take the array from it at once; then write our record. */
int array_claim (struct raid_array *a, bool force, char *err,
                 size_t errlen);
/* Renew the record every heartbeat_ms from a thread of its own. */
int array_heartbeat_start (struct raid_array *a);
/* Stop the heartbeat and record a clean stop. */
void array_release (struct raid_array *a);
/* Before writing again after a read-only spell: -1 (the reason in
 * err) if another server took the array over meanwhile. */
int array_still_owned (struct raid_array *a, char *err, size_t errlen);
/* The record superblock writes carry: ours while claimed, else NULL. */
const struct owner_record *array_owner_record (const struct raid_array *a);

/* health.c: member failure and repair. */

/* The members not to read at all: every one not active. */
void array_unavailable (const struct raid_array *a, struct member_set *gone);
/* Whether every byte of the array is still readable without `gone`. */
bool array_alive_without (const struct raid_array *a,
                          const struct member_set *gone);
/* 0 while the array serves; -1 (EIO, logged once) once it has failed. */
int array_check_alive (struct raid_array *a);
/* Record member m as faulty (role 0xfffe) in the superblocks we hold;
 * array_write_superblocks puts that on disk. */
void array_record_faulty (struct raid_array *a, unsigned m);
/* Take member m out of the array: mark it faulty in the superblocks of
 * the others (events+1, role 0xfffe).  why says what happened. */
void array_fail_member (struct raid_array *a, unsigned m, const char *why);
/* After a batch of writes: fail every member an op failed on.  Returns 0
 * if the array still holds all its data, -1 (EIO) if not. */
int array_settle_writes (struct raid_array *a, struct io_batch *b);
/* After a batch of reads: log each failed read with member and offset,
 * add its member to gone (and to repair, if it is still active), and,
 * if rewrite is not NULL, add a write of the range to rewrite for each
 * member to repair, from the op's buffer (which the caller fills with
 * the right bytes before running it).  -1 (ENOMEM) if rewrite cannot
 * grow. */
int array_reads_failed (struct raid_array *a, const struct io_batch *b,
                        struct member_set *gone, struct member_set *repair,
                        struct io_batch *rewrite);
/* After rewriting ranges that failed to read: count a corrected read on
 * each member whose rewrite worked, fail those whose rewrite failed. */
int array_settle_repairs (struct raid_array *a, struct io_batch *b);
/* Write every present member's superblock (events+1) and flush it. */
int array_write_superblocks (struct raid_array *a);
/* The same, with sb_lock already held. */
int array_write_superblocks_locked (struct raid_array *a);

#endif
