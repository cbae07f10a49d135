/* nbdraid: the array's state, shared by the engine's own files.
 * Users of the engine include raid.h instead.
 */
#ifndef NBDRAID_ARRAY_H
#define NBDRAID_ARRAY_H

#include "raid.h"
#include "io-batch.h"
#include "iopool.h"
#include "member.h"
#include "parity.h"
#include "member-set.h"
#include "stripe-lock.h"
#include "superblock.h"

enum slot_state {
  SLOT_ACTIVE,                  /* in sync, used for reads and writes */
  SLOT_FAULTY,                  /* failed (now or before assembly) */
  SLOT_MISSING,                 /* absent, blank, or stale: needs recovery */
};

/* One role in the array, or a spare. */
struct raid_slot {
  struct member *io;            /* NULL when missing */
  char *path;                   /* as configured */
  char *controller;
  struct md_superblock sb;
  uint64_t data_offset_bytes;
  int state;                    /* enum slot_state; read with slot_state() */
  char why[256];                /* why it is not active */
};

/* What a family of levels does with a request (levels.c). */
struct raid_level_ops {
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
  uint64_t (*sync_units) (const struct raid_array *a);
  int (*sync) (struct raid_array *a, uint64_t first, uint64_t n);
};

extern const struct raid_level_ops copies_level_ops;
extern const struct raid_level_ops parity_level_ops;

struct raid_array {
  char name[33];
  struct raid_geometry geo;
  const struct raid_level_ops *ops;
  struct raid_slot *slots;      /* geo.members roles */
  struct raid_slot *spares;
  unsigned nspares;
  bool readonly;
  bool direct;
  unsigned reference;           /* the slot whose superblock was freshest */
  int failed;                   /* lost more members than it tolerates */
  pthread_mutex_t sb_lock;      /* superblock updates */
  struct iopool *pool;
  struct stripe_locks locks;
  struct parity_code code;
  const uint8_t *zeros;         /* unit_bytes of zeros, read-only */
  raid_log_fn log;
  void *log_opaque;
};

/* Run a batch in parallel; each op gets its own result.  An op on a
 * member that is no longer active fails with ENODEV.  Returns the number
 * of ops that failed. */
size_t array_run (struct raid_array *a, struct io_batch *b);

static inline enum slot_state
slot_state (const struct raid_slot *s)
{
  return (enum slot_state) __atomic_load_n (&s->state, __ATOMIC_ACQUIRE);
}

/* health.c: member failure and repair. */

/* The members a request must not read: every one not active.  Take it
 * after the stripe lock, so a failure marked by an earlier writer of
 * the stripe is seen. */
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
/* A read failed: log it with member and offset, and add the member to
 * gone (and to repair, if it is still active, to be rewritten). */
void array_read_failed (struct raid_array *a, const struct io_op *op,
                        struct member_set *gone, struct member_set *repair);
/* After rewriting ranges that failed to read: count a corrected read on
 * each member whose rewrite worked, fail those whose rewrite failed. */
int array_settle_repairs (struct raid_array *a, struct io_batch *b);
/* Write every active member's superblock (events+1) and flush it. */
int array_write_superblocks (struct raid_array *a);

void array_log (const struct raid_array *a, enum raid_log_level level,
                const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* Lock the granules of array units first..last. */
void array_lock_units (struct raid_array *a, uint64_t first, uint64_t last,
                       bool exclusive);
void array_unlock_units (struct raid_array *a, uint64_t first,
                         uint64_t last);

#endif
