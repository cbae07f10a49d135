/* nbdraid: the partial parity log at run time (md's raid5-ppl.c).
 *
 * Each member carries a log area; the writes to a RAID5 stripe log the
 * partial parity of the chunks they leave alone on the stripe's parity
 * member before any data or parity reaches the members.  Only a
 * member's latest log is replayed, so a log gives way to the next only
 * once the stripes it covers are on the members and flushed.  Requests
 * that arrive meanwhile gather into the next log (md's io_unit): one
 * log write and one flush serve them all.  A request joins its logs in
 * member order, which keeps requests from waiting on each other in a
 * circle.  ppl.c sets up and replays; ppl-write.c writes.
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

struct ppl_group;

struct ppl_member_log {
  pthread_mutex_t lock;
  pthread_cond_t changed;      /* a group written or finished */
  uint64_t next;               /* where in the area the next log goes */
  bool ready;                  /* emptied since assembly */
  struct ppl_group *busy;      /* written; its requests' writes run */
  struct ppl_group *gathering; /* the next log, taking requests */
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
  struct ppl_group *group[RAID_MAX_MEMBERS]; /* the logs it joined */
  struct member_set written;                 /* members its data writes go to */
};

/* Set up from the reference superblock (no log unless it has one). */
int ppl_open (struct raid_array *a, const struct md_superblock *ref);
void ppl_close (struct raid_array *a);

/* At assembly: if the array was not stopped cleanly, replay every
 * member's latest log; then empty the logs.  0, or -1 with err. */
int ppl_recover (struct raid_array *a, bool dirty, char *err, size_t errlen);

/* Empty member m's log area (zeros, and a header without entries at
 * its start: md's ppl_write_empty_header).  0, or -1 (errno set). */
int ppl_empty_log (struct raid_array *a, unsigned m);

/* A device takes role m (a spare promoted, a member re-added): with a
 * log, empty its area first, as md does (ppl_modify_log), so that no
 * replay takes the logs of its earlier life for this one's.  Before
 * the superblocks record the role.  A failure is logged; the area is
 * then emptied before its first log. */
void ppl_member_joins (struct raid_array *a, unsigned m);

/* Add an entry for parity member `parity`: the data written starts at
 * array sector data_sector and is data_bytes long; pp (pp_bytes, 0 for
 * rows every data chunk writes) is the XOR of the rest.  0, or -1
 * (ENOMEM). */
int ppl_add (struct ppl_pending *p, unsigned parity, uint32_t signature,
             uint64_t data_sector, uint32_t data_bytes, const uint8_t *pp,
             uint32_t pp_bytes);
/* Join the next log of each member p has entries for, in member order,
 * and return once they are all written.  A log that cannot be written
 * fails its member (whose parity then is not written).  Call before
 * the data writes.  0, or -1 (ENOMEM: nothing may be written; call
 * ppl_finish all the same). */
int ppl_commit (struct raid_array *a, struct ppl_pending *p);
/* After the data writes: leave the logs; the last request out of a log
 * flushes what its requests wrote and lets the next log go. */
void ppl_finish (struct raid_array *a, struct ppl_pending *p);

#endif
