/* nbdraid: rewriting the config file, as nbdraid add, remove and
 * create --arrange do: line by line, through a temporary file and a
 * rename, so a crash leaves the old file or the new one. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config-file.h"
#include "raid.h"

/* Free n lines and the array that holds them. */
static void
free_lines (char **lines, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    free (lines[i]);
  free (lines);
}

/* The file's lines, each with its newline; NULL (errno set) if it
 * cannot all be read: a rewrite from part of it would lose the rest. */
static char **
read_lines (const char *file, size_t *n)
{
  FILE *fp = fopen (file, "re");
  char **lines = NULL, *line = NULL, **grown;
  size_t len = 0;
  int failed = 0;

  *n = 0;
  if (!fp)
    return NULL;
  while (getline (&line, &len, fp) != -1) {
    grown = realloc (lines, (*n + 1) * sizeof *lines);
    if (!grown) {
      failed = ENOMEM;
      break;
    }
    lines = grown;
    lines[(*n)++] = line;
    line = NULL;
    len = 0;
  }
  if (!failed && ferror (fp))
    failed = errno ? errno : EIO;
  free (line);
  fclose (fp);
  if (failed || !lines) {
    free_lines (lines, *n);
    *n = 0;
    errno = failed ? failed : EINVAL;
    return NULL;
  }
  return lines;
}

/* Write lines[] to the config file through a temporary and rename. */
static int
write_lines (const char *file, char **lines, size_t n, char *err,
             size_t errlen)
{
  char *tmp = NULL;
  FILE *fp;
  size_t i;

  if (asprintf (&tmp, "%s.nbdraid-tmp", file) == -1 ||
      !(fp = fopen (tmp, "we"))) {
    snprintf (err, errlen, "%s: %s", file, strerror (errno));
    free (tmp);
    return -1;
  }
  for (i = 0; i < n; i++)
    fputs (lines[i], fp);
  if (fclose (fp) != 0 || rename (tmp, file) == -1) {
    snprintf (err, errlen, "%s: %s", file, strerror (errno));
    unlink (tmp);
    free (tmp);
    return -1;
  }
  free (tmp);
  return 0;
}

/* Keep the config file's text in t, for raid_config_restore to put back. */
int
raid_config_save (const char *file, struct raid_config_text *t)
{
  t->lines = read_lines (file, &t->n);
  return t->lines ? 0 : -1;
}

int
raid_config_restore (const char *file, struct raid_config_text *t,
                     char *err, size_t errlen)
{
  int r = write_lines (file, t->lines, t->n, err, errlen);

  raid_config_text_free (t);
  return r;
}

/* Free the text saved in t, leaving it empty. */
void
raid_config_text_free (struct raid_config_text *t)
{
  free_lines (t->lines, t->n);
  t->lines = NULL;
  t->n = 0;
}

int
raid_config_add_spare (const struct raid_config *cfg, const char *path,
                       char *err, size_t errlen)
{
  size_t n = 0, at = 0;
  char **lines = read_lines (cfg->file, &n), **grown, *line;
  unsigned i;
  int r = -1;

  if (!lines || asprintf (&line, "spare = %s\n", path) == -1) {
    snprintf (err, errlen, "%s: %s", cfg->file, strerror (errno));
    goto out;
  }
  grown = realloc (lines, (n + 1) * sizeof *lines);
  if (!grown) {
    free (line);
    snprintf (err, errlen, "%s: %s", cfg->file, strerror (ENOMEM));
    goto out;
  }
  lines = grown;
  /* After the array's last device line: in its own [members] section
   * when the file defines nested arrays too. */
  for (i = 0; i < cfg->nmembers + cfg->nspares; i++) {
    int l = i < cfg->nmembers ? cfg->members[i].line
      : cfg->spares[i - cfg->nmembers].line;
    if ((size_t) l > at && (size_t) l <= n)
      at = (size_t) l;
  }
  if (at == 0)
    at = n;
  memmove (lines + at + 1, lines + at, (n - at) * sizeof *lines);
  lines[at] = line;
  n++;
  r = write_lines (cfg->file, lines, n, err, errlen);
 out:
  free_lines (lines, n);
  return r;
}

/* A member or spare line: its key (true for member) and where its
 * path starts and ends.  False for any other line. */
static bool
device_line (const char *line, bool *member, size_t *at, size_t *len)
{
  const char *p = line + strspn (line, " \t");
  size_t keylen = strncmp (p, "member", 6) == 0 ? 6
    : strncmp (p, "spare", 5) == 0 ? 5 : 0;

  if (keylen == 0)
    return false;
  *member = keylen == 6;
  p += keylen;
  p += strspn (p, " \t");
  if (*p++ != '=')
    return false;
  p += strspn (p, " \t");
  *at = (size_t) (p - line);
  *len = strcspn (p, " \t\r\n#;");
  return *len > 0;
}

/* Does this line of the file name path as a member or spare?  The file
 * may have changed since it was parsed, so match the text, not the
 * line number. */
static bool
line_names (const struct raid_config *cfg, const char *line,
            const char *path, bool *member, size_t *at, size_t *len)
{
  char *dir, *tok, *full = NULL;
  bool same;

  if (!device_line (line, member, at, len))
    return false;
  tok = strndup (line + *at, *len);
  dir = strdup (cfg->file);
  if (!tok || !dir)
    same = false;
  else if (tok[0] == '/' || raid_spec_is_uri (tok))
    same = config_same_path (tok, path);
  else
    same = asprintf (&full, "%s/%s", dirname (dir), tok) != -1 &&
      config_same_path (full, path);
  free (tok);
  free (dir);
  free (full);
  return same;
}

/* What a device's line becomes once the device is removed: a spare's is
 * commented out; a member's keeps its role, as "missing", since the
 * member lines count the array's roles (and give them their order). */
static char *
dropped_line (const char *line, bool member, size_t at, size_t len)
{
  char *out;
  int r;

  if (!member)
    r = asprintf (&out, "# removed by nbdraid: %s", line);
  else
    r = asprintf (&out, "%.*s%s%.*s # removed by nbdraid: %.*s\n",
                  (int) at, line, RAID_MEMBER_MISSING,
                  (int) strcspn (line + at + len, "\r\n"), line + at + len,
                  (int) len, line + at);
  return r == -1 ? NULL : out;
}

int
raid_config_drop_device (const struct raid_config *cfg, const char *path,
                         char *err, size_t errlen)
{
  size_t n = 0, i, at = 0, len = 0;
  char **lines = read_lines (cfg->file, &n), *dropped;
  bool member = false;
  int r = 0;

  if (!lines) {
    snprintf (err, errlen, "%s: %s", cfg->file, strerror (errno));
    return -1;
  }
  for (i = 0; i < n && !line_names (cfg, lines[i], path, &member, &at, &len);
       i++)
    ;
  if (i < n) {                  /* else not in the file: nothing to drop */
    dropped = dropped_line (lines[i], member, at, len);
    if (!dropped) {
      snprintf (err, errlen, "%s: %s", cfg->file, strerror (ENOMEM));
      r = -1;
    }
    else {
      free (lines[i]);
      lines[i] = dropped;
      r = write_lines (cfg->file, lines, n, err, errlen);
    }
  }
  free_lines (lines, n);
  return r;
}

/* Does a member line name path (a device re-added that was never
 * removed)? */
static bool
names_member (const struct raid_config *cfg, char **lines, size_t n,
              const char *path)
{
  size_t i, at, len;
  bool member;

  for (i = 0; i < n; i++)
    if (line_names (cfg, lines[i], path, &member, &at, &len) && member)
      return true;
  return false;
}

/* Is this line one dropped_line made of a member line naming path?
 * Then *restored is that member line again: its path where "missing"
 * is, the rest (options) kept, the comment gone. */
static bool
restored_line (const struct raid_config *cfg, const char *line,
               const char *path, char **restored)
{
  static const char mark[] = " # removed by nbdraid: ";
  const char *m = strstr (line, mark), *was;
  size_t at, len, wlen, wat, w;
  bool member;
  char *old;
  int r;

  if (!m || !device_line (line, &member, &at, &len) || !member
      || len != strlen (RAID_MEMBER_MISSING)
      || strncmp (line + at, RAID_MEMBER_MISSING, len) != 0)
    return false;
  was = m + strlen (mark);
  wlen = strcspn (was, " \t\r\n");
  if (asprintf (&old, "member = %.*s", (int)wlen, was) == -1)
    return false;
  member = line_names (cfg, old, path, &member, &wat, &w) && member;
  free (old);
  if (!member)
    return false;
  r = asprintf (restored, "%.*s%.*s%.*s\n", (int)at, line, (int)wlen, was,
                (int)(m - (line + at + len)), line + at + len);
  return r != -1;
}

int
raid_config_restore_device (const struct raid_config *cfg, const char *path,
                            char *err, size_t errlen)
{
  size_t n = 0, i;
  char **lines = read_lines (cfg->file, &n), *restored = NULL;
  int r = -1;

  if (!lines) {
    snprintf (err, errlen, "%s: %s", cfg->file, strerror (errno));
    return -1;
  }
  for (i = 0; i < n && !restored_line (cfg, lines[i], path, &restored); i++)
    ;
  if (i < n) {
    free (lines[i]);
    lines[i] = restored;
    r = write_lines (cfg->file, lines, n, err, errlen);
  }
  else if (names_member (cfg, lines, n, path))
    r = 0; /* never removed: its line names it still */
  else
    snprintf (err, errlen,
              "%s: no line says 'member = missing # removed by nbdraid: "
              "%s'; put the device's member line back by hand",
              cfg->file, path);
  free_lines (lines, n);
  return r;
}

int
raid_config_reorder (struct raid_config *cfg, const unsigned *order,
                     char *err, size_t errlen)
{
  struct raid_member_spec *specs = malloc (cfg->nmembers * sizeof *specs);
  size_t nlines = 0, i;
  char **lines = read_lines (cfg->file, &nlines), **reordered = NULL;
  unsigned role;
  int r = -1;

  if (!specs || !lines || !(reordered = calloc (nlines, sizeof *reordered))) {
    snprintf (err, errlen, "%s: %s", cfg->file, strerror (errno));
    goto out;
  }
  /* Role r's line now says what member order[r]'s line said. */
  for (i = 0; i < nlines; i++) {
    reordered[i] = lines[i];
    for (role = 0; role < cfg->nmembers; role++)
      if ((size_t) cfg->members[role].line == i + 1)
        reordered[i] = lines[cfg->members[order[role]].line - 1];
  }
  if (write_lines (cfg->file, reordered, nlines, err, errlen) == -1)
    goto out;
  for (role = 0; role < cfg->nmembers; role++) {
    specs[role] = cfg->members[order[role]];
    specs[role].line = cfg->members[role].line;
  }
  memcpy (cfg->members, specs, cfg->nmembers * sizeof *specs);
  r = 0;
 out:
  free_lines (lines, nlines);
  free (reordered);
  free (specs);
  return r;
}

/* The line of the device a role change names: for promote, the spare
 * line naming path; else the member line naming it, or (a role no
 * device held) a member line that says missing.  n if none. */
static size_t
role_line (const struct raid_config *cfg, char **lines, size_t n,
           const char *path, bool promote, size_t *at)
{
  size_t i, len;
  bool member;

  for (i = 0; i < n; i++)
    if (line_names (cfg, lines[i], path, &member, at, &len) &&
        member != promote)
      return i;
  for (i = 0; !promote && i < n; i++)
    if (device_line (lines[i], &member, at, &len) && member &&
        len == strlen (RAID_MEMBER_MISSING) &&
        strncmp (lines[i] + *at, RAID_MEMBER_MISSING, len) == 0)
      return i;
  return n;
}

int
raid_config_change_roles (const struct raid_config *cfg, const char *paths,
                          enum raid_role_change how, char *err, size_t errlen)
{
  bool promote = how == RAID_ROLES_PROMOTE;
  size_t n = 0, i, at;
  char **lines = read_lines (cfg->file, &n), *path = NULL, *changed;
  const char *p, *nl;
  int r = -1;

  if (!lines) {
    snprintf (err, errlen, "%s: %s", cfg->file, strerror (errno));
    return -1;
  }
  for (p = paths; (nl = strchr (p, '\n')) != NULL; p = nl + 1) {
    free (path);
    if (!(path = strndup (p, (size_t) (nl - p))))
      goto nomem;
    i = role_line (cfg, lines, n, path, promote, &at);
    if (i == n) {
      snprintf (err, errlen, "%s: no %s line names %s; update the file by "
                "hand", cfg->file, promote ? "spare" : "member", path);
      goto out;
    }
    /* A spare taking a new role becomes a member line, its path and
     * options kept, and a member leaving the roles a spare line; a
     * dropped role's member line is commented out, since the member
     * lines count the roles, and so is a role no device held. */
    if (promote)
      r = asprintf (&changed, "member = %s", lines[i] + at);
    else if (how == RAID_ROLES_DEMOTE && strcmp (path, RAID_MEMBER_MISSING))
      r = asprintf (&changed, "spare = %s", lines[i] + at);
    else
      r = asprintf (&changed, "# dropped by nbdraid grow: %s", lines[i]);
    if (r == -1)
      goto nomem;
    r = -1;
    free (lines[i]);
    lines[i] = changed;
  }
  r = write_lines (cfg->file, lines, n, err, errlen);
  goto out;
 nomem:
  snprintf (err, errlen, "%s: %s", cfg->file, strerror (ENOMEM));
 out:
  free (path);
  free_lines (lines, n);
  return r;
}

/* Line *line (1-based, 0: none) says key = value now; or, value NULL,
 * is commented out (*line 0 after).  A new line goes into add[], *line
 * then its index there, negated and less one. */
static int
set_key (char **lines, size_t n, int *line, const char *key,
         const char *value, char **add, unsigned *nadd)
{
  char *text;
  int r;

  if (!value && *line <= 0)
    return 0;
  if (!value)
    r = asprintf (&text, "# dropped by nbdraid grow --level: %s",
                  lines[*line - 1]);
  else
    r = asprintf (&text, "%s = %s\n", key, value);
  if (r == -1)
    return -1;
  if (*line > 0 && (size_t) *line <= n) {
    free (lines[*line - 1]);
    lines[*line - 1] = text;
    *line = value ? *line : 0;
  }
  else {
    *line = -(int) *nadd - 1;
    add[(*nadd)++] = text;
  }
  return 0;
}

/* A line number after nadd lines were inserted after line at. */
static void
moved (int *line, size_t at, unsigned nadd)
{
  if (*line < 0)
    *line = (int) at - *line;   /* -1 - k: the k-th inserted line */
  else if (*line > (int) at)
    *line += (int) nadd;
}

int
raid_config_set_level (struct raid_config *cfg, int level, uint32_t layout,
                       uint64_t chunk_bytes, char *err, size_t errlen)
{
  const struct raid_level *l = raid_level_find (level);
  size_t n = 0, at;
  char **lines = read_lines (cfg->file, &n), **grown, *add[3];
  char lv[16], lay[64], chunk[32];
  unsigned nadd = 0, i;
  int r = -1, level_line = cfg->level_line, layout_line = cfg->layout_line,
      chunk_line = cfg->chunk_line;

  if (!lines || !l) {
    snprintf (err, errlen, "%s: %s", cfg->file, strerror (lines ? EINVAL
                                                          : errno));
    goto out;
  }
  snprintf (lv, sizeof lv, "%d", level);
  raid_layout_name (level, layout, lay, sizeof lay);
  if (chunk_bytes % (1024 * 1024) == 0)
    snprintf (chunk, sizeof chunk, "%" PRIu64 "M", chunk_bytes >> 20);
  else
    snprintf (chunk, sizeof chunk, "%" PRIu64 "K", chunk_bytes >> 10);
  at = (size_t) (cfg->level_line > 0 ? cfg->level_line : cfg->section_line);
  if (set_key (lines, n, &level_line, "level", lv, add, &nadd) == -1 ||
      set_key (lines, n, &layout_line, "layout",
               l->layouts ? lay : NULL, add, &nadd) == -1 ||
      set_key (lines, n, &chunk_line, "chunk",
               l->has_chunk ? chunk : NULL, add, &nadd) == -1 ||
      !(grown = realloc (lines, (n + nadd) * sizeof *lines))) {
    snprintf (err, errlen, "%s: %s", cfg->file, strerror (ENOMEM));
    while (nadd)
      free (add[--nadd]);
    goto out;
  }
  lines = grown;
  /* New lines go after the level line (or the [array] line). */
  if (at > n)
    at = n;
  memmove (lines + at + nadd, lines + at, (n - at) * sizeof *lines);
  memcpy (lines + at, add, nadd * sizeof *add);
  n += nadd;
  if (write_lines (cfg->file, lines, n, err, errlen) == -1)
    goto out;
  /* The parsed config follows: the new shape, and line numbers past
   * the insertion moved down. */
  for (i = 0; i < cfg->nmembers; i++)
    moved (&cfg->members[i].line, at, nadd);
  for (i = 0; i < cfg->nspares; i++)
    moved (&cfg->spares[i].line, at, nadd);
  moved (&level_line, at, nadd);
  moved (&layout_line, at, nadd);
  moved (&chunk_line, at, nadd);
  cfg->level_line = level_line;
  cfg->layout_line = layout_line;
  cfg->chunk_line = chunk_line;
  cfg->level = level;
  cfg->layout = layout;
  cfg->chunk_bytes = l->has_chunk ? chunk_bytes : 0;
  r = 0;
 out:
  free_lines (lines, n);
  return r;
}
