/* nbdraid: the partial parity log at run time (md's raid5-ppl.c).
 *
 * Each member carries a log area; the writes to a RAID5 stripe log the
 * partial parity of the chunks they leave alone on the stripe's parity
 * member before any data or parity reaches the members.  A member's
 * log is held from its log write until the stripes it covers are on
 * the members and flushed, since only its latest log is replayed: so a
 * request's logs are one per parity member and taken in member order.
 */
#ifndef NBDRAID_PPL_H
#define NBDRAID_PPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "member-set.h"
#include "ppl-format.h"

struct raid_array;
struct md_superblock;

/* Largest partial parity one log carries, and so one segment. */
#define PPL_UNIT_PP_BYTES (128 * 1024)

struct ppl_member_log {
  pthread_mutex_t lock;
  uint64_t next; /* where in the area the next log goes */
  bool ready;    /* emptied since assembly */
};

struct raid_ppl {
  bool on;
  uint32_t signature;
  uint64_t area_offset; /* member byte offset of each area */
  uint64_t area_bytes;
  uint64_t generation;         /* the last log's (atomic) */
  struct ppl_member_log *logs; /* by role */
  unsigned nlogs;
  /* Replay at assembly: entries replayed and skipped (bad checksum). */
  unsigned replayed, skipped;
};

/* One log being built for one member: its header, then its partial
 * parity. */
struct ppl_unit {
  struct ppl_header h;
  uint8_t *buf; /* header block, then the partial parity */
  uint64_t pp_bytes, cap;
};

/* The logs one request writes, one per parity member. */
struct ppl_pending {
  struct ppl_unit *unit[RAID_MAX_MEMBERS];
  struct member_set held;    /* members whose log lock it holds */
  struct member_set written; /* members its data writes go to */
};

/* Set up from the reference superblock (no log unless it has one). */
int ppl_open (struct raid_array *a, const struct md_superblock *ref);
void ppl_close (struct raid_array *a);

/* At assembly: if the array was not stopped cleanly, replay every
 * member's latest log; then empty the logs.  0, or -1 with err. */
int ppl_recover (struct raid_array *a, bool dirty, char *err, size_t errlen);

/* Add an entry for parity member `parity`: the data written starts at
 * array sector data_sector and is data_bytes long; pp (pp_bytes, 0 for
 * rows every data chunk writes) is the XOR of the rest.  0, or -1
 * (ENOMEM). */
int ppl_add (struct ppl_pending *p, unsigned parity, uint32_t signature,
             uint64_t data_sector, uint32_t data_bytes, const uint8_t *pp,
             uint32_t pp_bytes);
/* Take the logs, in member order, and write them.  A log that cannot
 * be written fails its member (whose parity then is not written).
 * Call before the data writes. */
void ppl_commit (struct raid_array *a, struct ppl_pending *p);
/* After the data writes: flush what they wrote, give the logs back. */
void ppl_finish (struct raid_array *a, struct ppl_pending *p);

#endif
