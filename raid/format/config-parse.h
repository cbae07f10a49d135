/* nbdraid: what the config parser's pieces share: config-file.c reads
 * the file and its [array] keys, config-members.c the member lines. */
#ifndef NBDRAID_CONFIG_PARSE_H
#define NBDRAID_CONFIG_PARSE_H

#include <stdbool.h>
#include <stdio.h>

#include "raid.h"

struct parse_state {
  struct raid_config *top;
  struct raid_config *cfg;      /* the array of the current section */
  FILE *fp;
  char *dir;                    /* the config file's directory */
  int line;
  int section_line;             /* line of the latest [section] header */
  bool line_too_long;
  char *err;
  size_t errlen;
  bool failed;
};

/* Record the first error as "file:line: message"; later ones are
 * dropped.  Returns 0, an error to libinih. */
int config_fail (struct parse_state *st, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
/* A path as the config means it: relative to the config's directory. */
char *config_resolve_path (struct parse_state *st, const char *path);
/* One [members] line: member or spare (spare set), or scan.  1, or 0
 * after config_fail (libinih's convention). */
int config_add_member (struct parse_state *st, const char *value,
                       bool spare);
int config_add_scan (struct parse_state *st, const char *value);
/* journal = PATH|URI: the write journal's device. */
int config_add_journal (struct parse_state *st, const char *value);
/* write-mostly and failfast where md honours them. */
void config_check_flags (struct parse_state *st,
                         const struct raid_config *cfg,
                         const struct raid_level *l);
/* write-behind where md does it: RAID1, a bitmap, a write-mostly copy. */
void config_check_ppl (struct parse_state *st, const struct raid_config *cfg);
/* consistency-policy journal where md keeps one: RAID5/6, a journal
 * device, no bitmap. */
void config_check_journal (struct parse_state *st,
                           const struct raid_config *cfg);
void config_check_write_behind (struct parse_state *st,
                                const struct raid_config *cfg);

#endif
