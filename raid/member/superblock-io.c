/* nbdraid: superblock I/O on a member. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "owner.h"
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

/* The md superblocks nbdraid does not read, where mdadm puts them:
 * v0.90 in the last 64 KiB-aligned 64 KiB, v1.0 8 KiB before the end
 * (4 KiB aligned), v1.1 at the start.  A name for the one found, or
 * NULL. */
static const char *
other_metadata (struct member *m, uint8_t *b)
{
  const struct {
    uint64_t off;
    uint32_t major;
    const char *name;
  } where[] = {
    { (m->size_bytes & ~0xffffULL) - 0x10000, 0,
      "md v0.90 metadata (superblock at the end of the device)" },
    { ((m->size_bytes / 512 - 16) & ~7ULL) * 512, 1,
      "md v1.0 metadata (superblock at the end of the device)" },
    { 0, 1, "md v1.1 metadata (superblock at the start of the device)" },
  };
  size_t i;

  for (i = 0; i < sizeof where / sizeof where[0]; i++)
    if (m->size_bytes >= 0x20000 &&
        m->ops->pread (m, b, MD_SB_BLOCK_BYTES, where[i].off) == 0 &&
        le32_get (b) == MD_SB_MAGIC && le32_get (b + 4) == where[i].major)
      return where[i].name;
  return NULL;
}

/* md_sb_read, and with show_bad_csum md_sb_read_examine. */
static int
read_superblock (struct member *m, struct md_superblock *sb,
                 bool *no_superblock, bool show_bad_csum, char *err,
                 size_t errlen)
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
    const char *other = *no_superblock ? other_metadata (m, b) : NULL;
    if (other) {
      *no_superblock = false;   /* create must not write over it */
      snprintf (err, errlen, "%s: %s is not supported; nbdraid reads md "
                "v1.2 only", m->name, other);
    }
    else
      snprintf (err, errlen, "%s: %s%s", m->name,
                *no_superblock ? "" : "bad md superblock: ", why);
    if (show_bad_csum && md_sb_only_csum_wrong (b, sb, m->size_bytes))
      r = 1;
    goto out;
  }
  r = 0;
 out:
  free (b);
  return r;
}

int
md_sb_read (struct member *m, struct md_superblock *sb, bool *no_superblock,
            char *err, size_t errlen)
{
  return read_superblock (m, sb, no_superblock, false, err, errlen);
}

int
md_sb_read_examine (struct member *m, struct md_superblock *sb,
                    bool *no_superblock, char *err, size_t errlen)
{
  return read_superblock (m, sb, no_superblock, true, err, errlen);
}

int
md_sb_write_within (struct member *m, const struct md_superblock *sb,
                    const struct owner_record *owner, unsigned timeout_ms)
{
  uint8_t *b = block_alloc ();
  int r;

  if (!b) {
    errno = ENOMEM;
    return -1;
  }
  md_sb_encode (sb, b);
  if (owner && owner_fits (sb->max_dev))
    owner_encode (owner, b);
  r = timeout_ms && m->ops->pwrite_within
          ? m->ops->pwrite_within (m, b, MD_SB_BLOCK_BYTES, MD_SB_OFFSET_BYTES,
                                   timeout_ms)
          : m->ops->pwrite (m, b, MD_SB_BLOCK_BYTES, MD_SB_OFFSET_BYTES);
  free (b);
  return r;
}

int
md_sb_write (struct member *m, const struct md_superblock *sb,
             const struct owner_record *owner)
{
  return md_sb_write_within (m, sb, owner, 0);
}

int
md_sb_read_owner_within (struct member *m, struct owner_record *rec,
                         unsigned timeout_ms)
{
  uint8_t *b = block_alloc ();
  int r = -1;

  if (!b) {
    errno = ENOMEM;
    return -1;
  }
  if ((timeout_ms && m->ops->pread_within
           ? m->ops->pread_within (m, b, MD_SB_BLOCK_BYTES, MD_SB_OFFSET_BYTES,
                                   timeout_ms)
           : m->ops->pread (m, b, MD_SB_BLOCK_BYTES, MD_SB_OFFSET_BYTES))
      == 0)
    r = owner_decode (b, rec) == 0;
  free (b);
  return r;
}

int
md_sb_read_owner (struct member *m, struct owner_record *rec)
{
  return md_sb_read_owner_within (m, rec, 0);
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
