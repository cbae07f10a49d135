/* nbdraid: the array config file (INI, parsed with libinih).
 *
 *   [array]
 *   name = media
 *   level = 6
 *   layout = left-symmetric
 *   chunk = 128K
 *   [members]
 *   member = /srv/disks/d0.img controller=c0
 *   spare  = /srv/disks/s0.img controller=c0
 *
 * Every key is documented in plugins/raid/nbdkit-raid-plugin.pod.  The
 * structure and what nbdraid needs of it are in raid.h; this is the
 * rest, for the engine.
 */
#ifndef NBDRAID_CONFIG_FILE_H
#define NBDRAID_CONFIG_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raid.h"

/* Put member order[role] in each role: rewrite the file's member lines
 * in that order (atomically) and reorder cfg->members to match. */
int raid_config_reorder (struct raid_config *cfg, const unsigned *order,
                         char *err, size_t errlen);

/* The config file's text as it was, to put back if a create that
 * rewrote it (--arrange) is refused. */
struct raid_config_text {
  char **lines;
  size_t n;
};

/* 0, or -1 with errno set. */
int raid_config_save (const char *file, struct raid_config_text *t);
/* Write t back as the file (atomically) and free it.  0, or -1 with a
 * line naming the file in err. */
int raid_config_restore (const char *file, struct raid_config_text *t,
                         char *err, size_t errlen);
void raid_config_text_free (struct raid_config_text *t);

/* "128K", "1M", "4096": bytes, binary suffixes K M G T.  -1 if bad. */
int raid_parse_size (const char *s, uint64_t *bytes);

/* Two spellings of one file ("d0.img", "./d0.img", a symlink), or of
 * one NBD export (uri_same), are the same member. */
bool config_same_path (const char *a, const char *b);

#endif
