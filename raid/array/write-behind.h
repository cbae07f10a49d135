/* nbdraid: md's write-behind, for a RAID1's write-mostly copies.
 *
 * A client write goes to the other copies as ever; what it has for the
 * write-mostly ones (a far mirror) becomes a behind-write: its data
 * copied and queued, and written by the array's behind workers while
 * the client already has its answer.  At most `max` are outstanding
 * (md's max_write_behind), a write counting once per MiB or part of it
 * (md splits behind-writes into bios of at most 1 MiB, each counted),
 * which bounds the memory they hold; a writer beyond that waits for
 * room.
 *
 * A behind-write holds its bitmap regions and the array's count of
 * writes in flight until it has landed (array_hold_write, given back
 * with array_end_write), so neither the bitmap sweep nor safemode can
 * call those regions in sync while the far copy lacks them: after a
 * crash, or once the far copy has failed, the regions are resynced or
 * recovered from the local copy.  Overlapping behind-writes land in the
 * order they were made (md serializes them too): each waits for the
 * earlier ones it overlaps.  Whoever needs the far copy current waits
 * first: a flush, and a rebuild's reconstruct, for every behind-write
 * made before it; a read, resync or check of a range for those
 * overlapping it; and block status calls such a range data.  A write
 * that no other copy took waits for its own behind-write.
 */
#ifndef NBDRAID_WRITE_BEHIND_H
#define NBDRAID_WRITE_BEHIND_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "io-batch.h"

struct raid_array;

/* Behind-writes landing at once, each in its own worker: enough to keep
 * a far member's link busy (its requests overlap on its connections). */
#define BEHIND_WORKERS 16

/* A behind-write counts against the limit once per this many bytes
 * (md: BIO_MAX_VECS pages per behind bio). */
#define BEHIND_SLOT_BYTES (1024 * 1024)

/* One client write's part for the write-mostly copies. */
struct behind_write {
  struct behind_write *next, *prev;     /* outstanding, oldest first */
  uint64_t seq;
  uint64_t off, len;            /* array bytes */
  uint64_t first, last;         /* its sync units, held in the bitmap */
  unsigned blockers;            /* earlier outstanding ones it overlaps */
  unsigned slots;               /* what it counts against the limit */
  bool running;
  uint8_t *data;                /* the client's bytes; NULL for zeros */
  struct io_batch batch;        /* the writes to the write-mostly copies */
};

struct raid_behind {
  unsigned max;                 /* md's write_behind; 0: off */
  bool running;                 /* the workers are started */
  bool stopping;
  pthread_mutex_t lock;
  pthread_cond_t landed;        /* one landed: room, or a wait is over */
  pthread_cond_t runnable;      /* one may run, or the workers stop */
  struct behind_write *head, *tail;
  unsigned outstanding;          /* slots of the queued ones */
  uint64_t next_seq;
  unsigned nworkers;
  pthread_t workers[BEHIND_WORKERS];
};

/* At assembly: write-behind with at most max outstanding (0: off). */
void behind_init (struct raid_array *a, unsigned max);
/* raid_start: the workers.  0, or -1 with errno set. */
int behind_start (struct raid_array *a);
/* Before the clean stop: every behind-write landed, the workers gone. */
void behind_stop (struct raid_array *a);
void behind_free (struct raid_array *a);

/* Are writes to the write-mostly copies written behind? */
bool behind_on (const struct raid_array *a);

/* A behind-write for the client write of [off, off+len) from buf (NULL:
 * zeros), its data copied; the caller adds the write-mostly copies'
 * writes to its batch, their bytes at behind_data.  NULL (ENOMEM). */
struct behind_write *behind_prepare (struct raid_array *a, const void *buf,
                                     uint64_t off, uint64_t len);
/* Where the bytes at `done` into the write are kept (NULL for zeros). */
void *behind_data (struct behind_write *w, uint64_t done);
/* Free one that was prepared but not queued. */
void behind_discard (struct behind_write *w);
/* Queue w (the queue owns it from now): wait for room, hold its
 * regions, and let it run once the earlier ones it overlaps have
 * landed.  Called with the write's unit locks held, so overlapping
 * writes queue in the order they reach the other copies.  Returns its
 * sequence number (0 if it had no writes and was freed). */
uint64_t behind_queue (struct raid_array *a, struct behind_write *w);
/* Wait until every behind-write up to sequence number seq has landed. */
void behind_wait_upto (struct raid_array *a, uint64_t seq);
/* Wait until every behind-write queued so far has landed (a flush). */
void behind_drain (struct raid_array *a);
/* Wait until no behind-write overlapping array bytes [off, off+len) is
 * outstanding.  The caller holds those units alone (writes hold them
 * shared), so none comes. */
void behind_wait_range (struct raid_array *a, uint64_t off, uint64_t len);
/* For status: the limit (0: off), the behind-writes outstanding and
 * what they count against the limit. */
void behind_status (struct raid_array *a, unsigned *limit, unsigned *writes,
                    unsigned *slots);
/* Is one outstanding there now?  (Block status: a write-mostly copy
 * cannot yet say what such a range holds.) */
bool behind_pending (struct raid_array *a, uint64_t off, uint64_t len);

#endif
