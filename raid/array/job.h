/* nbdraid: what the background job's files share (job.c schedules and
 * steps the job; job-rebuild.c rebuilds, job-sync.c resyncs and
 * checks, job-pieces.c runs a window's pieces on the workers).
 */
#ifndef NBDRAID_JOB_H
#define NBDRAID_JOB_H

#include "array.h"

/* A quarter MiB of a member per piece: a window gives every worker
 * several, so none waits long for the last one, and a piece's buffers
 * stay in the caches from its reads to its write. */
#define PIECE_BYTES (256 * 1024)
/* What the workers' buffers may take together (each holds a piece of
 * every member and the piece rebuilt). */
#define WORKERS_BYTES (32 * 1024 * 1024)

/* A window's pieces, taken in turn by the workers: do_piece handles
 * [at, at+n) as worker i, 0 or -1 with errno set. */
struct pieces {
  struct raid_array *a;
  uint64_t pos, len, each;      /* target bytes, or sync units */
  uint64_t next;                /* offset of the next piece not taken */
  const struct io_op *first;    /* worker i's op is first[i] */
  int (*do_piece) (struct pieces *p, uint64_t at, uint64_t n, unsigned i);
  const struct member_set *gone;        /* rebuild: what not to read */
  /* resync: units not in holes; check: mismatched sectors */
  uint64_t count[JOB_WORKERS_MAX];
};

/* Workers for pieces of each bytes of a member: several per core,
 * within the memory bound. */
size_t worker_count (const struct raid_array *a, uint64_t each,
                     uint64_t len);
/* Run p's pieces on n workers.  0, or -1 with errno set. */
int run_pieces (struct pieces *p, size_t n);

/* Bytes of each member one sync unit covers, for progress. */
uint64_t unit_progress_bytes (const struct raid_array *a);
/* How far a job goes between checkpoints in the superblocks. */
uint64_t checkpoint_bytes (const struct raid_array *a);
/* A rebuild's checkpoints come at least this far apart in time too. */
#define REBUILD_CHECKPOINT_MS 1000
/* Start a recovery of role, or its replacement by spare, from byte
 * `from` of the data area; log and announce it. */
void start_rebuild (struct raid_array *a, enum raid_job_kind kind,
                    unsigned role, unsigned spare, uint64_t from);

/* One step of each kind of job, up to budget bytes of each member:
 * 1 while there is more, -1 on error. */
int step_rebuild (struct raid_array *a, uint64_t budget);
int step_resync (struct raid_array *a, uint64_t budget);
int step_check (struct raid_array *a, uint64_t budget);

#endif
