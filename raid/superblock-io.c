/* nbdraid: superblock I/O on a member. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "superblock-io.h"

/* Superblock blocks are page aligned so O_DIRECT members need no
 * bounce buffer. */
static uint8_t *
block_alloc (void)
{
  void *b;

  if (posix_memalign (&b, 4096, MD_SB_BLOCK_BYTES) != 0)
    return NULL;
  return b;
}

int
md_sb_read (struct member *m, struct md_superblock *sb, bool *no_superblock,
            char *err, size_t errlen)
{
  uint8_t *b = block_alloc ();
  char why[320];
  int r = -1;

  *no_superblock = false;
  if (!b) {
    snprintf (err, errlen, "%s: %s", m->name, strerror (ENOMEM));
    return -1;
  }
  if (m->size_bytes < MD_SB_OFFSET_BYTES + MD_SB_BLOCK_BYTES) {
    *no_superblock = true;
    snprintf (err, errlen, "%s: too small to hold an md superblock "
              "(%" PRIu64 " bytes)", m->name, m->size_bytes);
    goto out;
  }
  if (m->ops->pread (m, b, MD_SB_BLOCK_BYTES, MD_SB_OFFSET_BYTES) == -1) {
    snprintf (err, errlen, "%s: pread of the superblock at %d: %s",
              m->name, MD_SB_OFFSET_BYTES, strerror (errno));
    goto out;
  }
  if (md_sb_decode (b, sb, no_superblock, why, sizeof why) == -1 ||
      md_sb_check (sb, m->size_bytes, why, sizeof why) == -1) {
    snprintf (err, errlen, "%s: %s%s", m->name,
              *no_superblock ? "" : "bad md superblock: ", why);
    goto out;
  }
  r = 0;
 out:
  free (b);
  return r;
}

int
md_sb_write (struct member *m, const struct md_superblock *sb)
{
  uint8_t *b = block_alloc ();
  int r;

  if (!b) {
    errno = ENOMEM;
    return -1;
  }
  md_sb_encode (sb, b);
  r = m->ops->pwrite (m, b, MD_SB_BLOCK_BYTES, MD_SB_OFFSET_BYTES);
  free (b);
  return r;
}

int
md_sb_wipe (struct member *m)
{
  uint8_t *b = block_alloc ();
  int r;

  if (!b) {
    errno = ENOMEM;
    return -1;
  }
  memset (b, 0, MD_SB_BLOCK_BYTES);
  r = m->ops->pwrite (m, b, MD_SB_BLOCK_BYTES, MD_SB_OFFSET_BYTES);
  if (r == 0)
    r = m->ops->flush (m);
  free (b);
  return r;
}
