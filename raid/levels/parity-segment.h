/* nbdraid: one segment of a parity write or resync (parity-segment.c),
 * as io-parity.c runs them. */
#ifndef NBDRAID_PARITY_SEGMENT_H
#define NBDRAID_PARITY_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "array.h"
#include "stripe-column.h"

enum seg_mode { SEG_RCW, SEG_RMW, SEG_DEGRADED };

struct segment {
  struct column col;
  struct member_set written; /* data indices the pieces write in the
                              * column; none for a resync */
  enum seg_mode mode;
  struct member_set gone; /* members not to read for this column */
};

/* One request, as its segments see it. */
struct request {
  struct raid_array *a;
  const struct stripe_piece *piece; /* disjoint */
  unsigned npieces;
  uint64_t chunk, stripe_bytes;
  bool resync;              /* recompute parity, write no data */
  enum parity_log log;      /* what its journal entries are for */
  struct members_view view; /* members in use, taken under the locks */
  struct member_set bad;    /* members that failed a read in it */
  struct member_set repair; /* of those, the ones to rewrite */
};

/* The columns [*from, *to) of data chunk i of stripe `stripe`, within
 * [lo, hi), that piece p writes; none when *from >= *to. */
void segment_covered (const struct request *rq, uint64_t stripe, unsigned i,
                      uint64_t lo, uint64_t hi, const struct stripe_piece *p,
                      uint64_t *from, uint64_t *to);
/* The nth run of data chunks segment s writes next to each other (from
 * 0), into *run; false if it has no nth. */
bool segment_written_run (const struct request *rq, const struct segment *s,
                          unsigned nth, struct member_set *run);
/* Decide how to update a segment and allocate its buffers. */
int segment_prepare (const struct request *rq, struct segment *s);
/* Add segment s's reads to b. */
int segment_add_reads (const struct request *rq, const struct segment *s,
                       struct io_batch *b);
/* Writes of segment s (writes), of blocks of members being repaired
 * (fixes), and its log or journal entries. */
int segment_add_writes (const struct request *rq, struct segment *s,
                        struct io_batch *writes, struct io_batch *fixes,
                        struct ppl_pending *log, struct journal_pending *jp);
/* Free the column buffers of segs[0..n-1]. */
void segment_free_all (struct segment *segs, unsigned n);

#endif
