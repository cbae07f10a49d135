/* nbdraid: replaying md's write journal (md's r5l_recovery_log and
 * r5c_recovery_flush_log), apart from the array so that a test can
 * replay into a model.
 *
 * From the tail, each meta block that is sound (magic, version,
 * checksum), carries the next sequence number and its own position,
 * is read; the first that is not is where the log ends, and the new
 * log starts there.  A block whose pages fail their checksums is
 * dropped, named, and the log read on, as md does.  Pages gather
 * by stripe row as md's recovery gathers them: a row's data, then its
 * parity (in the same block when written through, later when
 * written back); data after a row's parity means that update was
 * complete, and it is written before the row starts again; a flush
 * payload names rows already on the members.  At the end every row
 * with parity is written, data then parity; the data of rows without
 * (md's data-only stripes, the write-back cache at the crash) is handed
 * to keep_data, to be written as a new client write would be.
 */
#ifndef NBDRAID_JOURNAL_REPLAY_H
#define NBDRAID_JOURNAL_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "journal-format.h"

struct journal_replay_ops {
  /* Read the block at byte pos of the ring.  0, or -1 (errno). */
  int (*read_block) (void *opaque, uint64_t pos, uint8_t *block);
  /* The stripe (member sector from the data offset) holding array
   * sector `sector`. */
  uint64_t (*stripe_of) (void *opaque, uint64_t sector);
  /* Write a data page at array sector `sector`, or parity page `which`
   * (0: P, 1: Q) of the stripe at member sector `stripe`.  0, or -1
   * with the reason in err. */
  int (*write_data) (void *opaque, uint64_t sector, const uint8_t *page,
                     char *err, size_t errlen);
  int (*write_parity) (void *opaque, uint64_t stripe, unsigned which,
                       const uint8_t *page, char *err, size_t errlen);
  /* A data page logged without its row's parity, at array sector
   * `sector`: copy it. */
  int (*keep_data) (void *opaque, uint64_t sector, const uint8_t *page,
                    char *err, size_t errlen);
  void *opaque;
};

struct journal_replay_result {
  uint64_t end_pos;  /* ring bytes: the first block not replayed */
  uint64_t end_seq;  /* the sequence number it should have had */
  unsigned blocks;   /* meta blocks read after the tail's */
  unsigned stripes;  /* stripe rows written */
  unsigned kept;     /* data pages handed to keep_data */
  unsigned damaged;  /* blocks dropped: pages failed their checksums */
  char damage[256];  /* the first of them, and why */
  char stopped[256]; /* why the block at end_pos ends the log */
};

/* Replay the ring of ring_bytes from byte `tail`, whose meta block has
 * sequence `seq`; parity_pages is 1 for RAID5, 2 for RAID6.  0, or -1
 * with the reason in err (a read or write failed, memory ran short). */
int journal_replay (uint32_t uuid_checksum, uint64_t ring_bytes,
                    unsigned parity_pages, uint64_t tail, uint64_t seq,
                    const struct journal_replay_ops *ops,
                    struct journal_replay_result *res, char *err,
                    size_t errlen);

#endif
