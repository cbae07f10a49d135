/* nbdraid: md's write journal at run time, write-through (md's
 * raid5-cache.c with journal_mode write-through).
 *
 * Every stripe update a client write makes (the data pages it writes,
 * and the stripe rows' new P and Q) is appended to the journal device
 * and flushed there before any of it reaches a member.  After a crash
 * the journal is replayed from its tail, so each logged stripe ends
 * with its data and parity agreeing whichever member writes landed:
 * the write hole is closed, degraded or not.  The tail (the journal
 * device's superblock's journal_tail) advances to the latest meta
 * block once the members are flushed with no logged write in flight;
 * the log wraps round the device's data area.  Writes that arrive
 * while the journal is being written gather into its next write, as
 * md's io_units do.  journal.c sets up, replays and keeps the
 * superblock; journal-write.c logs.
 */
#ifndef NBDRAID_JOURNAL_H
#define NBDRAID_JOURNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "journal-cache.h"
#include "journal-format.h"
#include "journal-replay.h"

struct raid_array;
struct raid_config;
struct raid_options;
struct raid_slot;
struct md_superblock;

/* The smallest data area a journal may have: twice the log of a whole
 * stripe (every member's chunk and a meta block a row) and a block, so
 * that one request's log always fits beside the previous one's. */
static inline uint64_t
journal_min_area_bytes (unsigned members, uint64_t chunk_bytes)
{
  return 2 * (((uint64_t)members + 1) * chunk_bytes + R5L_BLOCK_BYTES);
}

struct raid_journal {
  bool on;                /* the array keeps a write journal */
  struct raid_slot *dev;  /* its device (NULL when missing) */
  uint32_t uuid_checksum; /* md's seed of every checksum */
  uint64_t area_offset;   /* device bytes to the ring (data_offset) */
  uint64_t area_bytes;    /* the ring, in whole 4 KiB blocks */
  pthread_mutex_t lock;   /* all below */
  pthread_cond_t idle;    /* in_flight fell to 0 */
  uint64_t head;          /* ring bytes: where the next meta block goes */
  uint64_t seq;           /* its sequence number */
  uint64_t last_pos;      /* the latest meta block written */
  uint64_t tail;          /* the superblock's tail (atomic) */
  unsigned in_flight;     /* logged requests writing their members */
  /* Requests waiting to be logged gather here while one of them logs
   * the previous batch with the lock released (md's io_units): one
   * write and one flush serve a batch. */
  struct journal_pending *queue, **queue_end;
  bool writing;
  pthread_cond_t logged;  /* a batch was logged */
  bool failed;            /* the device failed: no more writes (atomic) */
  bool missing;           /* assembled without it (read-only) */
  struct journal_replay_result replay; /* at assembly */
  /* Data the replay found logged without parity (md's data-only
   * stripes), logged again at the head; raid_start writes it. */
  struct journal_kept *kept;
  unsigned nkept;
  uint64_t kept_pos, kept_seq; /* its first meta block there */
  struct journal_cache cache; /* journal-mode = write-back */
};

/* A page of data the replay keeps for raid_start to write. */
struct journal_kept {
  uint64_t sector; /* array sector */
  uint8_t *page;
};

/* One row of a stripe: its data pages, then its parity. */
struct journal_entry {
  uint16_t type;     /* R5L_PAYLOAD_DATA or _PARITY */
  uint32_t pages;    /* 1, or the parities for a parity entry */
  uint64_t location; /* array sector, or the row's member sector */
  const uint8_t *page[2];
};

/* What one request logs: rows of entries, each ending with parity. */
struct journal_pending {
  struct journal_entry *e;
  unsigned n, cap;
  bool data_only;      /* data pages alone, each a row (write-back) */
  bool destage;        /* the write-back cache's: may use the room kept */
  bool committed;
  uint64_t first_pos, first_seq; /* its first meta block, once logged */
  /* While it waits to be logged (journal-write.c). */
  uint64_t bytes;               /* of the ring its rows take */
  struct journal_pending *next; /* in the queue */
  bool done;                    /* logged, or failed with error */
  int error;
};

/* At assembly, after the members are placed: open the journal device
 * that [members] journal names if the superblocks keep a journal.
 * Missing or stale, it refuses the array (md's rule) unless it is
 * assembled read-only.  0, or -1 with a one-line reason in err. */
int journal_open (struct raid_array *a, const struct raid_config *cfg,
                  const struct md_superblock *ref,
                  const struct raid_options *opts, char *err, size_t errlen);
/* Replay what the journal holds past its tail into the members, then
 * start a new log after it.  0, or -1 with err. */
int journal_recover (struct raid_array *a, char *err, size_t errlen);
void journal_close (struct raid_array *a);
/* Free what the replay kept, once written. */
void journal_kept_free (struct raid_journal *j);

/* With sb_lock held, after the members' superblocks were written with
 * these events: write the journal device's, from `like` (a member's),
 * with the tail.  A failure fails the journal. */
void journal_write_superblock (struct raid_array *a,
                               const struct md_superblock *like,
                               uint64_t events, uint64_t now);

/* Queue the entries of one stripe row: data page `page` at array
 * sector `sector`, and (ending the row) the parity of the row at
 * member sector `stripe`.  0, or -1 (ENOMEM). */
int journal_add_data (struct journal_pending *p, uint64_t sector,
                      const uint8_t *page);
int journal_add_parity (struct journal_pending *p, uint64_t stripe,
                        unsigned parities, const uint8_t *pp, const uint8_t *q);
/* Bytes of the ring a row of `data` data pages takes at most. */
uint64_t journal_row_bytes (unsigned data, unsigned parities);
/* Log p's rows and flush the journal; the member writes may then go.
 * 0, or -1 with errno (EIO: the journal failed, and writes are now
 * refused; EROFS; ENOMEM).  Call journal_finish either way. */
int journal_commit (struct raid_array *a, struct journal_pending *p);
/* With sb_lock held: the journal device failed (what: the operation,
 * error: its errno).  Recorded faulty in the superblocks; client writes
 * are refused from now on, as md refuses them. */
void journal_fail_locked (struct raid_array *a, const char *what, int error);
/* After the member writes of a committed request; frees p. */
void journal_finish (struct raid_array *a, struct journal_pending *p);
/* The journal's part of raid_status. */
struct raid_status;
void journal_status (struct raid_array *a, struct raid_status *st);
/* The clean stop: write the write-back cache to the members, wait for
 * the logged writes, flush the members, and move the tail to a new
 * empty meta block past them (md's last reclaim). */
int journal_stop (struct raid_array *a);

#endif
