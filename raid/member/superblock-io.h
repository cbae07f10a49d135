/* nbdraid: reading and writing a member's md v1.2 superblock. */
#ifndef NBDRAID_SUPERBLOCK_IO_H
#define NBDRAID_SUPERBLOCK_IO_H

#include <stdbool.h>
#include <stddef.h>

#include "member.h"
#include "superblock.h"

/* Read and decode.  Returns 0; or -1 with the reason in err (prefixed
 * with the member's name) and *no_superblock set when the member simply
 * has none. */
int md_sb_read (struct member *m, struct md_superblock *sb,
                bool *no_superblock, char *err, size_t errlen);

/* As md_sb_read, for examine alone: a superblock whose only fault is
 * its checksum (md_sb_only_csum_wrong) gives 1, the fault in err and
 * sb complete, so it can be shown as mdadm --examine shows it. */
int md_sb_read_examine (struct member *m, struct md_superblock *sb,
                        bool *no_superblock, char *err, size_t errlen);

struct owner_record;
/* Encode and write (not flushed), with the owner record in the
 * block's last sector if owner is not NULL (owner.h).  Returns 0 or -1
 * with errno set. */
int md_sb_write (struct member *m, const struct md_superblock *sb,
                 const struct owner_record *owner);
/* Read the owner record beside the superblock: 1, 0 if there is none,
 * -1 with errno set if the block cannot be read. */
int md_sb_read_owner (struct member *m, struct owner_record *rec);

/* As md_sb_write and md_sb_read_owner, giving up after timeout_ms on a
 * member that can bound its wait (the heartbeat's: member.h,
 * pwrite_within); 0 waits as long as the member's own timeout. */
int md_sb_write_within (struct member *m, const struct md_superblock *sb,
                        const struct owner_record *owner, unsigned timeout_ms);
int md_sb_read_owner_within (struct member *m, struct owner_record *rec,
                             unsigned timeout_ms);

/* Zero the superblock block and flush: the member holds none after. */
int md_sb_wipe (struct member *m);

#endif
