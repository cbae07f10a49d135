/* nbdraid: wiping a device's md superblock (nbdraid zero-superblock, as
 * mdadm --zero-superblock), so it can serve elsewhere or be added as a
 * new spare.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "le.h"
#include "member.h"
#include "raid.h"
#include "superblock-io.h"

int
raid_zero_superblock (const char *spec, char *err, size_t errlen)
{
  /* Opened to write, so held alone: a device an array uses is refused. */
  struct member_open_options mo = {
    .nbd_timeout_s = RAID_NBD_TIMEOUT_S,
    .connect_timeout_s = RAID_NBD_CONNECT_TIMEOUT_S,
  };
  struct member *m;
  uint8_t magic[4];
  int r = -1;

  m = member_open (spec, &mo, err, errlen);
  if (!m)
    return -1;
  /* Wherever md v1.2 keeps it, whatever else is wrong with it (that is
   * what zeroing is for); other metadata is not ours to wipe. */
  if (m->size_bytes < MD_SB_OFFSET_BYTES + MD_SB_BLOCK_BYTES ||
      m->ops->pread (m, magic, 4, MD_SB_OFFSET_BYTES) == -1 ||
      le32_get (magic) != MD_SB_MAGIC) {
    snprintf (err, errlen, "%s: no md v1.2 superblock to zero", spec);
    goto out;
  }
  if (md_sb_wipe (m) == -1) {
    snprintf (err, errlen, "%s: writing zeros over the superblock at %d: "
              "%s", spec, MD_SB_OFFSET_BYTES, strerror (errno));
    goto out;
  }
  r = 0;
 out:
  member_close (m);
  return r;
}
