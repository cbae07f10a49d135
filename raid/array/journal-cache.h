/* nbdraid: the write-back cache of md's write journal (md's
 * raid5-cache.c in journal_mode write-back, "r5c").
 *
 * A client write is acknowledged once its data pages are in the
 * journal (logged without parity, md's data-only stripes) and here;
 * the stripes are written to the members later (destaged), each by the
 * level's write-through path, which logs the stripe's data with its
 * parity before the members see them.  Reads see the cache over the
 * members.  The cache is keyed by stripe (a row of chunks): a stripe is
 * always destaged whole, so the parity a destage logs covers every
 * page the log holds for its rows, as md's recovery expects.
 *
 * The journal's tail may not pass the oldest meta block holding a page
 * still here: each stripe remembers where its oldest write was logged.
 * Threads destage the oldest stripes (several at once, as many as the
 * room the ring keeps for destages allows) while the cache is over a
 * quarter of its limit or pins an eighth of the ring; a writer over
 * the limit or a quarter of the ring destages a stripe itself (back
 * pressure).
 */
#ifndef NBDRAID_JOURNAL_CACHE_H
#define NBDRAID_JOURNAL_CACHE_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct raid_array;
struct cache_stripe;

/* A run of neighbouring cached pages, copied out for a destage. */
struct cache_run {
  uint64_t offset, count; /* array bytes */
  uint8_t *buf;
};

struct journal_cache {
  bool on;                  /* journal-mode = write-back */
  uint64_t stripe_bytes;    /* data bytes of a stripe */
  uint64_t limit;           /* bytes of pages it holds at most */
  unsigned workers;         /* destage threads */
  sem_t slots;              /* a destage's turn (several at once) */
  pthread_mutex_t lock;     /* all below */
  struct cache_stripe **bucket;
  unsigned nbuckets;
  unsigned stripes;
  uint64_t bytes;           /* of pages held (atomic for readers) */
  pthread_cond_t wake;      /* the destage thread has work */
  pthread_t thread[8];
  unsigned running;         /* threads started */
  bool stop;
};

/* At assembly, for a write-back journal of a ring of ring_bytes, whose
 * stripes hold stripe_bytes of data and log at most stripe_log_bytes. */
int journal_cache_init (struct journal_cache *c, uint64_t stripe_bytes,
                        uint64_t stripe_log_bytes, uint64_t ring_bytes);
void journal_cache_free (struct journal_cache *c);

/* Start the destage thread (raid_start); stop it, after writing every
 * cached stripe to the members (the clean stop).  0, or -1 (errno). */
int journal_cache_start (struct raid_array *a);
int journal_cache_drain (struct raid_array *a);

/* With the written stripes' locks held: keep count bytes of buf (whole
 * 4 KiB pages) at array offset `offset`, logged in the meta block at
 * ring byte pos with sequence seq.  0, or -1 (ENOMEM). */
int journal_cache_put (struct journal_cache *c, const uint8_t *buf,
                       uint64_t count, uint64_t offset, uint64_t pos,
                       uint64_t seq);
/* With the stripes' locks held (shared): copy the cached pages of
 * [offset, offset+count) over buf. */
void journal_cache_overlay (struct journal_cache *c, uint8_t *buf,
                            uint64_t count, uint64_t offset);
/* Whether stripe `stripe` has pages here. */
bool journal_cache_holds (struct journal_cache *c, uint64_t stripe);
/* With the stripe's lock held: its pages as runs (*n of them, in
 * offset order, each buffer malloc'd; free with journal_cache_runs_free);
 * 0, or -1 (ENOMEM). */
int journal_cache_runs (struct journal_cache *c, uint64_t stripe,
                        struct cache_run **runs, unsigned *n);
void journal_cache_runs_free (struct cache_run *runs, unsigned n);
/* With the stripe's lock held, after its destage: forget it. */
void journal_cache_drop (struct journal_cache *c, uint64_t stripe);
/* The ring position and sequence of the oldest meta block a cached page
 * was logged in; false when the cache is empty. */
bool journal_cache_oldest (struct journal_cache *c, uint64_t *pos,
                           uint64_t *seq);
/* Before a client write: destage the oldest stripe if the cache is over
 * its limit or pins a quarter of the ring (back pressure); wake the
 * threads past half of either. */
int journal_cache_make_room (struct raid_array *a);
/* Destage the oldest stripe no other destage has picked: 1, 0 when
 * there is none (after a millisecond's wait if all are picked), or
 * -1. */
int journal_cache_destage_oldest (struct raid_array *a);

static inline uint64_t
journal_cache_bytes (struct journal_cache *c)
{
  return __atomic_load_n (&c->bytes, __ATOMIC_ACQUIRE);
}

#endif
