/* nbdraid: what nbdraid create overwrote, to put back if it fails.
 *
 * A nested stack is created layer by layer: the inner arrays get their
 * superblocks before the outer array can be checked on top of them.  If
 * a later check or write fails, the bytes saved here are written back,
 * so a refused create leaves every device as it found it, and the
 * config file too if --arrange rewrote its member lines.
 */
#ifndef NBDRAID_CREATE_UNDO_H
#define NBDRAID_CREATE_UNDO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config-file.h"
#include "member.h"

struct undo_entry {
  struct member *m;             /* still open, or NULL: reopen path */
  char *path;
  uint64_t off;
  size_t len;
  uint8_t *old;
};

struct create_undo {
  struct undo_entry *e;
  size_t n, cap;
  struct member_open_options mo;        /* to reopen closed members */
  const char *config_file;              /* saved in config, or NULL */
  struct raid_config_text config;
};

/* Save m's bytes [off, off + len) before they are overwritten. */
int undo_save (struct create_undo *u, struct member *m, uint64_t off,
               size_t len);

/* The config file is about to be rewritten: keep its text, once. */
int undo_save_config (struct create_undo *u, const char *file);

/* m is being closed: its entries reopen it by path when replayed. */
void undo_forget_member (struct create_undo *u, const struct member *m);

/* Write back, newest first, what was saved on members still open
 * (open_only) or on the ones closed since, and with the latter the
 * config file.  Returns -1 with a line naming the device or file in err
 * if one could not be restored. */
int undo_replay (struct create_undo *u, bool open_only, char *err,
                 size_t errlen);

void undo_free (struct create_undo *u);

#endif
