/* nbdraid: the config file's [members] lines (member, spare, scan) and
 * the member flags md honours (write-mostly, failfast). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config-file.h"
#include "config-parse.h"
#include "journal-format.h"
#include "raid.h"

/* Is path one of specs[0..n-1] (missing roles aside)? */
static bool
path_listed (const struct raid_member_spec *specs, unsigned n,
             const char *path)
{
  unsigned i;

  for (i = 0; i < n; i++)
    if (!specs[i].missing && config_same_path (specs[i].path, path))
      return true;
  return false;
}

/* Is path a member or spare anywhere in the file (nested arrays
 * included)? */
static bool
listed_anywhere (const struct raid_config *top, const char *path)
{
  unsigned i;

  if (top->journal_path && config_same_path (top->journal_path, path))
    return true;
  for (i = 0; i <= top->ngroups; i++) {
    const struct raid_config *cfg = i == 0 ? top : top->groups[i - 1];
    if (path_listed (cfg->members, cfg->nmembers, path) ||
        path_listed (cfg->spares, cfg->nspares, path))
      return true;
  }
  return false;
}

/* scan = GLOB: a pattern of paths (relative to the config's directory,
 * as member paths are) where member devices may be found. */
int
config_add_scan (struct parse_state *st, const char *value)
{
  struct raid_config *cfg = st->cfg;
  char **grown, *resolved;

  if (!*value || raid_spec_is_uri (value) || raid_spec_array (value))
    return config_fail (st, "scan needs a path or a glob of paths, as "
                 "/dev/disk/by-id/ata-*");
  resolved = config_resolve_path (st, value);
  grown = realloc (cfg->scan, (cfg->nscan + 1) * sizeof *grown);
  if (!resolved || !grown) {
    free (resolved);
    return config_fail (st, "%s", strerror (ENOMEM));
  }
  cfg->scan = grown;
  cfg->scan[cfg->nscan++] = resolved;
  return 1;
}

/* "PATH [controller=NAME]", or "missing [controller=NAME]" on a member
 * line */
int
config_add_member (struct parse_state *st, const char *value, bool spare)
{
  struct raid_config *cfg = st->cfg;
  struct raid_member_spec spec = { .line = st->line };
  struct raid_member_spec **list = spare ? &cfg->spares : &cfg->members;
  unsigned *n = spare ? &cfg->nspares : &cfg->nmembers;
  char *copy = strdup (value), *tok, *save = NULL, *resolved;
  struct raid_member_spec *grown;

  if (!copy)
    return config_fail (st, "%s", strerror (ENOMEM));
  tok = strtok_r (copy, " \t", &save);
  if (!tok) {
    free (copy);
    return config_fail (st, "%s needs a path", spare ? "spare" : "member");
  }
  resolved = config_resolve_path (st, tok);
  if (!resolved) {
    free (copy);
    return config_fail (st, "%s", strerror (ENOMEM));
  }
  spec.path = resolved;
  spec.missing = strcmp (tok, RAID_MEMBER_MISSING) == 0;
  if (spec.missing && spare) {
    config_fail (st, "a spare cannot be missing (a member line of missing "
          "keeps an empty role)");
    goto out;
  }
  while ((tok = strtok_r (NULL, " \t", &save)) != NULL) {
    if (strncmp (tok, "controller=", 11) == 0 && tok[11]) {
      free (spec.controller);
      spec.controller = strdup (tok + 11);
    }
    else if (strcmp (tok, "write-mostly") == 0 && !spec.missing)
      spec.devflags |= RAID_DEVFLAG_WRITE_MOSTLY;
    else if (strcmp (tok, "failfast") == 0 && !spec.missing)
      spec.devflags |= RAID_DEVFLAG_FAILFAST;
    else {
      config_fail (st, "unknown member option '%s' (expected controller=NAME, "
            "write-mostly or failfast)", tok);
      goto out;
    }
  }
  if (!raid_spec_array (spec.path) && !spec.missing &&
      listed_anywhere (st->top, spec.path)) {
    config_fail (st, "%s is listed twice", spec.path);
    goto out;
  }
  if (*n >= RAID_MAX_MEMBERS) {
    config_fail (st, "more than %d %ss", RAID_MAX_MEMBERS,
          spare ? "spare" : "member");
    goto out;
  }
  grown = realloc (*list, (*n + 1) * sizeof **list);
  if (!grown) {
    config_fail (st, "%s", strerror (ENOMEM));
    goto out;
  }
  *list = grown;
  (*list)[(*n)++] = spec;
  free (copy);
  return 1;

 out:
  free (spec.path);
  free (spec.controller);
  free (copy);
  return 0;
}

/* write-mostly and failfast, as md honours them: on the copies of a
 * mirror (RAID1, RAID10); write-mostly not on every member, which
 * would leave no copy to read first. */
void
config_check_flags (struct parse_state *st, const struct raid_config *cfg,
             const struct raid_level *l)
{
  unsigned i, n = 0, line = 0;
  const char *flag = NULL;

  for (i = 0; i < cfg->nmembers + cfg->nspares; i++) {
    const struct raid_member_spec *m = i < cfg->nmembers ? &cfg->members[i]
      : &cfg->spares[i - cfg->nmembers];
    n += i < cfg->nmembers && (m->devflags & RAID_DEVFLAG_WRITE_MOSTLY);
    if (m->devflags && !line) {
      line = (unsigned) m->line;
      flag = m->devflags & RAID_DEVFLAG_WRITE_MOSTLY ? "write-mostly"
        : "failfast";
    }
  }
  st->line = (int) line;
  if (line && (l->parity_members || l->zoned))
    config_fail (st, "%s applies to the copies of RAID1 and RAID10, not to "
          "RAID%d members (md ignores it there)", flag, cfg->level);
  else if (n && n == cfg->nmembers)
    config_fail (st, "write-mostly on every member leaves no copy to read "
          "first: keep it off one at least");
}

/* md keeps a partial parity log for RAID5 alone, never beside a bitmap
 * (raid5-ppl.c ppl_init_log()). */
void
config_check_ppl (struct parse_state *st, const struct raid_config *cfg)
{
  if (!cfg->ppl)
    return;
  st->line = cfg->ppl_line;
  if (cfg->level != 5 || cfg->ngroups > 0)
    config_fail (st,
                 "consistency-policy ppl applies to RAID5, not to "
                 "RAID%d%s (md keeps a partial parity log for RAID5 only)",
                 cfg->level, cfg->ngroups > 0 ? " of nested arrays" : "");
  else if (cfg->bitmap_line && cfg->bitmap)
    config_fail (st,
                 "consistency-policy ppl excludes the bitmap that line "
                 "%d keeps (md refuses both)",
                 cfg->bitmap_line);
}

/* journal = PATH|URI in [members]: the write journal's device, the
 * served array's only (md keeps one per array). */
int
config_add_journal (struct parse_state *st, const char *value)
{
  struct raid_config *cfg = st->cfg;
  char *resolved;

  if (cfg != st->top)
    return config_fail (st, "journal applies to the served array only "
                            "([members])");
  if (!*value || raid_spec_array (value)
      || strcmp (value, RAID_MEMBER_MISSING) == 0)
    return config_fail (st, "journal needs a path or an NBD URI");
  if (cfg->journal_path)
    return config_fail (st, "journal is listed twice (line %d)",
                        cfg->journal_line);
  if (!(resolved = config_resolve_path (st, value)))
    return config_fail (st, "%s", strerror (ENOMEM));
  if (listed_anywhere (st->top, resolved)) {
    config_fail (st,
                 "%s is listed twice: a journal cannot also be a member "
                 "or a spare",
                 resolved);
    free (resolved);
    return 0;
  }
  cfg->journal_path = resolved;
  cfg->journal_line = st->line;
  return 1;
}

/* md keeps a write journal for RAID4/5/6 (raid5-cache.c r5l_init_log),
 * never beside a bitmap (raid5.c: "array cannot have both journal and
 * bitmap"), on a device of its own. */
void
config_check_journal (struct parse_state *st, const struct raid_config *cfg)
{
  if (cfg->journal_path && !cfg->journal) {
    st->line = cfg->journal_line;
    config_fail (st,
                 "journal = %s needs consistency-policy = journal in "
                 "[array]",
                 cfg->journal_path);
    return;
  }
  if (cfg->journal_mode_line && !cfg->journal) {
    st->line = cfg->journal_mode_line;
    config_fail (st, "journal-mode needs consistency-policy = journal");
    return;
  }
  if (!cfg->journal)
    return;
  st->line = cfg->ppl_line;
  if (cfg->level < 4 || cfg->level > 6 || cfg->ngroups > 0
      || (cfg->top && cfg->top != cfg))
    config_fail (st,
                 "consistency-policy journal applies to RAID4, RAID5 and "
                 "RAID6, "
                 "not to RAID%d%s (md journals parity arrays only)",
                 cfg->level,
                 cfg->ngroups > 0              ? " of nested arrays"
                 : cfg->top && cfg->top != cfg ? " nested in another"
                                               : "");
  else if (cfg->bitmap_line && cfg->bitmap)
    config_fail (st,
                 "consistency-policy journal excludes the bitmap that line "
                 "%d keeps (md refuses both)",
                 cfg->bitmap_line);
  else if (!cfg->journal_path)
    config_fail (st, "consistency-policy journal needs a journal device: "
                     "add journal = PATH (or an NBD URI) to [members]");
  else if (cfg->nmembers > R5L_MAX_MEMBERS)
    config_fail (st,
                 "consistency-policy journal serves at most %d members "
                 "(md's meta block); [members] lists %u",
                 R5L_MAX_MEMBERS, cfg->nmembers);
}

/* md writes behind only to the write-mostly copies of a RAID1, and
 * only with a bitmap, which keeps the regions of writes not yet on
 * them dirty until they land (md's raid1.c, md-bitmap.c). */
void
config_check_write_behind (struct parse_state *st,
                           const struct raid_config *cfg)
{
  unsigned i, n = 0;

  if (!cfg->write_behind)
    return;
  for (i = 0; i < cfg->nmembers; i++)
    n += (cfg->members[i].devflags & RAID_DEVFLAG_WRITE_MOSTLY) != 0;
  st->line = cfg->write_behind_line;
  if (cfg->level != 1)
    config_fail (st, "write-behind applies to RAID1, not to RAID%d (md "
                 "writes behind only to a mirror's write-mostly copies)",
                 cfg->level);
  else if (!cfg->bitmap)
    config_fail (st, "write-behind needs the write-intent bitmap (bitmap = "
                 "internal): it keeps what the write-mostly copies lack "
                 "dirty until they have it");
  else if (n == 0)
    config_fail (st, "write-behind needs a write-mostly member to write "
                 "behind to; none of the member lines has the flag");
}
