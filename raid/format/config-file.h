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
 * Every key is documented in plugins/raid/nbdkit-raid-plugin.pod.
 */
#ifndef NBDRAID_CONFIG_FILE_H
#define NBDRAID_CONFIG_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A member line of "missing" (mdadm's word) keeps a role that no
 * device holds: nbdraid remove writes it in place of a member's path,
 * so the lines still count the array's roles. */
#define RAID_MEMBER_MISSING "missing"

struct raid_member_spec {
  char *path;                   /* absolute path (or URI), or "missing" */
  char *controller;             /* NULL when not given */
  int line;
  bool missing;                 /* a role no device holds */
};

struct raid_config {
  char *file;
  char *name;
  int level;
  uint32_t layout;
  uint64_t chunk_bytes;         /* 0 for RAID1 */
  bool direct;
  char *controllers;            /* declared names, or NULL: any */
  char *socket;                 /* control socket, or NULL: the default */
  bool bitmap;                  /* an internal write-intent bitmap */
  uint64_t bitmap_chunk_bytes;  /* 0: mdadm's default */
  int bitmap_chunk_line;
  bool auto_readd;              /* re-add members that come back */
  uint64_t speed_min;           /* background work, bytes per second */
  uint64_t speed_max;           /* 0: unlimited */
  unsigned nbd_connections;
  unsigned nbd_timeout_s;
  unsigned nbd_connect_timeout_s;
  int level_line;               /* where each was set (0: defaulted), */
  int layout_line;              /* for messages */
  int chunk_line;
  char *layout_name;            /* as written */
  /* Nested arrays: the arrays this one's "array:NAME" members name, in
   * [array NAME] / [members NAME] sections of the same file. */
  struct raid_config **groups;
  unsigned ngroups;
  struct raid_config *top;      /* a nested array's: the file's top one */
  int section_line;             /* of this array's [array ...] section */
  bool used;                    /* a group some array has as a member */
  struct raid_member_spec *members;     /* in role order */
  unsigned nmembers;
  struct raid_member_spec *spares;
  unsigned nspares;
};

/* Parse and check a config file.  Returns 0, or -1 with a one-line
 * message naming file:line in err. */
int raid_config_load (const char *file, struct raid_config *cfg,
                      char *err, size_t errlen);
void raid_config_free (struct raid_config *cfg);

/* The nested array [array NAME] of top, or NULL. */
struct raid_config *raid_config_find_group (const struct raid_config *top,
                                            const char *name);

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

/* The control socket: [array] socket, or /run/nbdraid/NAME.sock for
 * root and $XDG_RUNTIME_DIR/nbdraid/NAME.sock (or /tmp/nbdraid-UID/)
 * for others.  Writes it into buf. */
void raid_config_socket_path (const struct raid_config *cfg, char *buf,
                              size_t len);

/* Add a "spare = PATH" line to the config file, or drop the line
 * naming PATH (a spare's is commented out, a member's says missing):
 * the server keeps the config in step with nbdraid add and remove.  0,
 * or -1 with err. */
int raid_config_add_spare (const struct raid_config *cfg, const char *path,
                           char *err, size_t errlen);
int raid_config_drop_device (const struct raid_config *cfg, const char *path,
                             char *err, size_t errlen);

/* "128K", "1M", "4096": bytes, binary suffixes K M G T.  -1 if bad. */
int raid_parse_size (const char *s, uint64_t *bytes);

/* Two spellings of one file ("d0.img", "./d0.img", a symlink) are the
 * same member. */
bool config_same_path (const char *a, const char *b);

#endif
