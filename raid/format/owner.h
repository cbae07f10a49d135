/* nbdraid: the owner record, which says which server serves an array
 * and that it is alive (multi-host protection, as ZFS's multihost
 * heartbeat does in its uberblocks).
 *
 * It lives in the last sector of the 4 KiB block that holds the md
 * superblock: md v1.2 writes the superblock's 256 + 2*max_dev bytes at
 * the block's start and puts its bitmap, bad-block log and PPL after
 * the block, so md neither reads nor writes that sector and members
 * move to and from md unchanged.  A member whose superblock reaches
 * into the sector (max_dev above OWNER_MAX_DEV) carries no record.
 */
#ifndef NBDRAID_OWNER_H
#define NBDRAID_OWNER_H

#include <stdbool.h>
#include <stdint.h>

/* Where in the superblock block, and how big. */
#define OWNER_BLOCK_OFFSET 3584
#define OWNER_BYTES 512
/* Role slots a superblock may have and leave the sector free. */
#define OWNER_MAX_DEV ((OWNER_BLOCK_OFFSET - 256) / 2)

enum owner_state {
  OWNER_SERVING = 1,            /* a server has the array open */
  OWNER_STOPPED = 2,            /* and stopped it cleanly */
};

struct owner_record {
  uint8_t set_uuid[16];         /* the array's */
  uint64_t owner_id;            /* random, new for every assembly */
  uint64_t seq;                 /* heartbeats written */
  uint64_t time_ms;             /* the owner's wall clock at the beat */
  uint32_t interval_ms;         /* between its heartbeats */
  uint32_t state;               /* enum owner_state */
  uint32_t pid;
  char host[65];
};

/* Write rec into its sector of the superblock block. */
void owner_encode (const struct owner_record *rec, uint8_t *sb_block);
/* Read the record from the superblock block: 0, or -1 if the sector
 * holds none (never written, torn, or another format). */
int owner_decode (const uint8_t *sb_block, struct owner_record *rec);
/* Whether a superblock of max_dev role slots leaves the sector free. */
bool owner_fits (uint32_t max_dev);

#endif
