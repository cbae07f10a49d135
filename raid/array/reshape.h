/* nbdraid: a restriping reshape in progress (md's grow of a RAID5 or
 * RAID6 onto more members, or its shrink onto fewer): its state, the
 * requests' paths while it runs (reshape-io.c) and the job that moves
 * the data (job-reshape.c).
 *
 * While it runs, a->geo is the new geometry (every role, the new data
 * offsets) except for its array_bytes, which stay the smaller of the
 * two sizes until the end.  A grow runs forwards: addresses below the
 * front are in the new geometry, the others still in the old one.  A
 * shrink runs backwards, md's way: from the end of the smaller array
 * down, the addresses at the front and above in the new geometry.  The
 * roles a shrink drops (reshape_leaving) are the first spares while it
 * runs, their op indexes the old roles'.  Both geometries are read and
 * written through the members' absolute offsets, not through the
 * level's request paths.
 */
#ifndef NBDRAID_RESHAPE_H
#define NBDRAID_RESHAPE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "geometry.h"
#include "io-batch.h"
#include "member-set.h"
#include "parity.h"

struct raid_array;
struct md_superblock;

struct raid_reshape {
  bool active;
  struct raid_geometry old; /* where the addresses not moved yet are */
  uint64_t new_bytes;       /* the array's size once done */
  /* Fewer members: the job runs from the end down (md's
   * reshape_backwards) and the data offset moves up. */
  bool backwards;
  /* Bytes each role's data offset moves: the new data area starts this
   * much before the old one (md's new_offset, negative), or after it
   * when backwards. */
  uint64_t delta;
  /* Where the new stripes written end (forwards) or start (backwards):
   * the front (atomic), and where the superblocks' reshape_position
   * says it is (safe). */
  uint64_t front;
  uint64_t safe;
  /* Client reads share it; client writes, and the job while it moves
   * the front or picks its next window, hold it alone.  The job moves
   * a window's data without it: reads go on beside it (the window
   * writes none of what they read, see job-reshape.c), writes that
   * touch the window's stripes in either geometry, array bytes
   * [busy_lo, busy_hi), wait on busy_cond until it is moved. */
  pthread_rwlock_t lock;
  pthread_mutex_t busy_mutex;
  pthread_cond_t busy_cond;
  uint64_t busy_lo, busy_hi;
  bool stalled; /* a member failed: said once */
  /* Roles a new device took in the old geometry's place of a missing
   * role (md fills the lowest empty one: a RAID0 growing through RAID4
   * has its missing parity role filled): nothing of the old geometry is
   * on them, the new one is below the front (md's recovery_offset
   * follows reshape_position). */
  struct member_set fresh;
  /* A RAID0 growing as md grows one, through a RAID4 whose parity role
   * is missing: RAID0 again when done (mdadm's impose_level). */
  bool to_raid0;
  /* The parity of the old geometry's stripes ([0]) and the new's. */
  struct parity_code code[2];
};

/* The roles a shrink drops: the first this many spares hold them
 * until it ends (md makes them spares then).  0 for any other. */
unsigned reshape_leaving (const struct raid_array *a);

/* Bytes of array one new stripe holds.  A stripe of geometry g as the
 * reshape counts them: a row of data chunks (parity), or one chunk
 * (RAID10, whose chunks md moves one at a time, its reshape_position
 * any chunk). */
uint64_t reshape_stripe_bytes (const struct raid_array *a);
uint64_t reshape_stripe_of (const struct raid_geometry *g);

/* The sync units (new stripes, as member offsets: the bitmap's) a
 * write of [offset, offset+count) may touch in either geometry: the
 * span of its new stripes and of its old ones (their member offsets in
 * the new chunk's units).  After a crash the reshape rewrites the old
 * geometry's stripes with their parity, and the resync that follows
 * an unclean stop finds the new ones marked. */
void reshape_sync_units (const struct raid_array *a, uint64_t offset,
                         uint64_t count, uint64_t *first, uint64_t *last);

/* Requests while a reshape runs: 0, or -1 with errno set.  buf NULL
 * writes zeros. */
int reshape_read (struct raid_array *a, void *buf, uint64_t count,
                  uint64_t offset);
int reshape_write (struct raid_array *a, const void *buf, uint64_t count,
                   uint64_t offset);

/* The superblocks say where the front is (flushing what the job wrote
 * first).  With the lock held alone.  0, or -1 if the array failed. */
int reshape_checkpoint (struct raid_array *a);

/* What the reshape changes, for messages: "from 4 to 5 members",
 * "from a 64K to a 128K chunk", "from layout left-symmetric to
 * right-asymmetric", joined with ", ". */
void reshape_describe (const struct raid_array *a, char *buf, size_t len);

/* Each window of the job: 1 while more, -1 on error. */
int step_reshape (struct raid_array *a, uint64_t budget);

/* The array's job becomes the reshape, from the front: every verb
 * that wants the array idle refuses meanwhile.  sb_lock held (or the
 * array not serving yet). */
void reshape_start_job (struct raid_array *a);

/* At assembly, from the freshest superblock: take up the reshape it
 * records.  0, or -1 with the reason in err. */
int reshape_load (struct raid_array *a, const struct md_superblock *ref,
                  char *err, size_t errlen);

/* The roles of the new geometry (new_geo) or the old one not to use,
 * failed, missing or fresh (old), in *gone: 0, or -1 (EIO) when more
 * are than the level's parity does without. */
int reshape_gone (const struct raid_array *a, bool new_geo,
                  struct member_set *gone);

/* How far the data of a fresh role is valid, as md's recovery_offset
 * says it for a device filling an empty role: the new geometry's
 * bytes of each member below sb's reshape_position. */
uint64_t reshape_fresh_front (const struct raid_array *a,
                              const struct md_superblock *sb);

/* At assembly, before the roles are counted: a device filling an
 * empty role of the old geometry (recovering, as far as the reshape
 * went) is fresh and active; nothing else changes. */
void reshape_mark_fresh (struct raid_array *a, const struct md_superblock *ref);

/* The parity codes of both geometries, once r->old and a->geo are set:
 * 0, or -1 (ENOMEM).  Freed when the reshape ends or the array
 * closes. */
int reshape_codes_init (struct raid_array *a);
void reshape_codes_free (struct raid_array *a);

/* Read array bytes [offset, offset+count) in the new geometry
 * (new_geo) or the old one, computing what the gone roles (of that
 * geometry) hold; the job's window writes whole new stripes
 * first..last-1 from data (their data chunks in order), leaving the
 * gone roles (of the new one) out.  0, or -1 with
 * errno set (a failed read logged; a member a write failed on is
 * failed). */
int reshape_read_range (struct raid_array *a, bool new_geo,
                        const struct member_set *gone, uint8_t *buf,
                        uint64_t count, uint64_t offset);
int reshape_write_stripes (struct raid_array *a, const struct member_set *gone,
                           const uint8_t *data, uint64_t first, uint64_t last);

/* The array's sync space was old_sync bytes before its geometry
 * changed (a RAID10's array size, a shrink's member size): the bitmap
 * covers the new one, nothing more marked (the reshape writes it all).
 * Memory and disk; a failure logged. */
void reshape_bitmap_follows (struct raid_array *a, uint64_t old_sync);

/* At assembly, when the freshest superblock says a reshape finished:
 * devices that missed that write take their new data offset. */
void reshape_settle_lagging (struct raid_array *a,
                             const struct md_superblock *ref);

/* The lowest byte of each role's data area (before the reshape's
 * move) holding array bytes from x up in the new geometry (new_geo) or
 * the old, and the end of those holding array bytes below x: the
 * bounds of the job's critical section (job-reshape.c). */
uint64_t reshape_first_byte (const struct raid_array *a, bool new_geo,
                             uint64_t x);
uint64_t reshape_end_byte (const struct raid_array *a, bool new_geo,
                           uint64_t x);

/* The members' I/O of both geometries (reshape-io.c): an op at byte
 * off of role m's data area in geometry new_geo, added to b; b run,
 * a failure logged with its member and offset (-1, EIO); writes b run,
 * a member a write failed on failed (-1 only if the array lost data
 * with it). */
int reshape_add_op (struct raid_array *a, struct io_batch *b,
                    enum io_kind kind, unsigned m, bool new_geo, uint64_t off,
                    uint64_t len, void *buf);
int reshape_run (struct raid_array *a, struct io_batch *b);
int reshape_run_writes (struct raid_array *a, struct io_batch *b);

/* RAID10's reads and writes while it reshapes (reshape-copies.c): array
 * bytes [offset, offset+count) of geometry new_geo, each chunk from the
 * first copy not gone that reads, or to every copy not gone (data NULL:
 * zeros).  0, or -1 with errno set. */
int reshape_copies_read (struct raid_array *a, bool new_geo,
                         const struct member_set *gone, uint8_t *buf,
                         uint64_t count, uint64_t offset);
int reshape_copies_write (struct raid_array *a, bool new_geo,
                          const struct member_set *gone, const uint8_t *data,
                          uint64_t count, uint64_t offset);

/* The absolute offset of byte off of role m's data area in the new
 * (new_geo) or the old geometry. */
uint64_t reshape_member_offset (const struct raid_array *a, unsigned m,
                                bool new_geo, uint64_t off);

#endif
