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
#include "stripe-lock.h"
#include "superblock.h"

/* One role in the array, or a spare. */
struct raid_slot {
  struct member *io;
  char *controller;
  struct md_superblock sb;
  uint64_t data_offset_bytes;
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
  struct iopool *pool;
  struct stripe_locks locks;
  struct parity_code code;
  const uint8_t *zeros;         /* unit_bytes of zeros, read-only */
  raid_log_fn log;
  void *log_opaque;
};

/* Run a batch in parallel.  Every failed op is logged with its member,
 * operation and offset; returns 0 or -1 with errno from the first. */
int array_run (struct raid_array *a, struct io_batch *b);

void array_log (const struct raid_array *a, enum raid_log_level level,
                const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* Lock the granules of array units first..last. */
void array_lock_units (struct raid_array *a, uint64_t first, uint64_t last,
                       bool exclusive);
void array_unlock_units (struct raid_array *a, uint64_t first,
                         uint64_t last);

#endif
