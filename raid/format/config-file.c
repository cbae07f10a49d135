/* nbdraid: loading and checking the config file and its [array] keys;
 * its member lines are read in config-members.c, rewriting it is in
 * config-rewrite.c, the sizes and durations it takes in units.c, the
 * default paths of its sockets and state in config-paths.c. */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "config-file.h"
#include "config-parse.h"
#include "geometry.h"
#include "raid.h"
#include "uri-same.h"

int
config_fail (struct parse_state *st, const char *fmt, ...)
{
  va_list ap;
  int n;

  if (st->failed)
    return 0;
  st->failed = true;
  if (st->line > 0)
    n = snprintf (st->err, st->errlen, "%s:%d: ", st->cfg->file, st->line);
  else
    n = snprintf (st->err, st->errlen, "%s: ", st->cfg->file);
  va_start (ap, fmt);
  if (n > 0 && (size_t) n < st->errlen)
    vsnprintf (st->err + n, st->errlen - (size_t) n, fmt, ap);
  va_end (ap);
  return 0;
}

/* A boolean: 1, true, yes or on; 0, false, no or off (any case).  -1 if
 * neither. */
static int
parse_bool (const char *s, bool *b)
{
  static const char *const yes[] = { "1", "true", "yes", "on" };
  static const char *const no[] = { "0", "false", "no", "off" };
  size_t i;

  for (i = 0; i < 4; i++) {
    if (strcasecmp (s, yes[i]) == 0)
      return *b = true, 0;
    if (strcasecmp (s, no[i]) == 0)
      return *b = false, 0;
  }
  return -1;
}

/* Member paths are relative to the config file's directory. */
char *
config_resolve_path (struct parse_state *st, const char *path)
{
  char *r;

  if (path[0] == '/' || raid_spec_is_uri (path) || raid_spec_array (path) ||
      strcmp (path, RAID_MEMBER_MISSING) == 0)
    return strdup (path);
  if (asprintf (&r, "%s/%s", st->dir, path) == -1)
    return NULL;
  return r;
}

bool
config_same_path (const char *a, const char *b)
{
  char *ra, *rb;
  bool same;

  if (raid_spec_is_uri (a) || raid_spec_is_uri (b))
    return uri_same (a, b);
  ra = realpath (a, NULL);
  rb = realpath (b, NULL);
  same = ra && rb ? strcmp (ra, rb) == 0 : strcmp (a, b) == 0;
  free (ra);
  free (rb);
  return same;
}


/* A whole number from lo to hi. */
static int
parse_count (struct parse_state *st, const char *name, const char *value,
             unsigned lo, unsigned hi, unsigned *out)
{
  char *end;
  unsigned long v;

  errno = 0;
  v = strtoul (value, &end, 10);
  if (errno || end == value || *end || v < lo || v > hi)
    return config_fail (st, "%s '%s' is not a number from %u to %u", name, value,
                 lo, hi);
  *out = (unsigned) v;
  return 1;
}

/* One key of an [array] section, set in the current array's config.
 * Returns 1, or 0 through fail. */
static int
set_array_key (struct parse_state *st, const char *name, const char *value)
{
  struct raid_config *cfg = st->cfg;

  if (strcmp (name, "name") == 0) {
    if (strlen (value) == 0 || strlen (value) > 32)
      return config_fail (st, "name must be 1 to 32 characters");
    free (cfg->name);
    cfg->name = strdup (value);
  }
  else if (strcmp (name, "level") == 0) {
    const struct raid_level *l = raid_level_parse (value);

    if (!l)
      return config_fail (st, "level '%s' is not one of 0, 1, 4, 5, 6, 10",
                          value);
    cfg->level = l->md_level;
    cfg->level_line = st->line;
  }
  else if (strcmp (name, "layout") == 0) {
    free (cfg->layout_name);
    cfg->layout_name = strdup (value);
    cfg->layout_line = st->line;
  }
  else if (strcmp (name, "chunk") == 0) {
    if (raid_parse_size (value, &cfg->chunk_bytes) == -1)
      return config_fail (st, "chunk '%s' is not a size (like 64K or 1M)", value);
    cfg->chunk_line = st->line;
  }
  else if (strcmp (name, "direct") == 0) {
    if (parse_bool (value, &cfg->direct) == -1)
      return config_fail (st, "direct '%s' is not true or false", value);
  }
  else if (strcmp (name, "bitmap") == 0) {
    if (strcmp (value, "internal") != 0 && strcmp (value, "none") != 0)
      return config_fail (st, "bitmap '%s' is not internal or none", value);
    cfg->bitmap = value[0] == 'i';
    cfg->bitmap_line = st->line;
  }
  else if (strcmp (name, "consistency-policy") == 0) {
    /* mdadm's --consistency-policy: how the array comes back
     * consistent after a crash. */
    if (strcmp (value, "resync") != 0 && strcmp (value, "bitmap") != 0
        && strcmp (value, "ppl") != 0 && strcmp (value, "journal") != 0)
      return config_fail (st,
                          "consistency-policy '%s' is not resync, bitmap, "
                          "ppl or journal",
                          value);
    cfg->ppl = value[0] == 'p';
    cfg->journal = value[0] == 'j';
    cfg->ppl_line = st->line;
    if (!cfg->bitmap_line)
      cfg->bitmap = value[0] == 'b';
    else if ((cfg->ppl || cfg->journal) && cfg->bitmap)
      return config_fail (st,
                          "consistency-policy %s excludes the bitmap "
                          "that line %d keeps (md refuses both)",
                          value, cfg->bitmap_line);
  }
  else if (strcmp (name, "journal-mode") == 0) {
    /* md's journal_mode: write-back acknowledges writes once they are
     * in the journal (journal-cache.h). */
    if (strcmp (value, "write-back") != 0
        && strcmp (value, "write-through") != 0)
      return config_fail (st,
                          "journal-mode '%s' is not write-through or "
                          "write-back",
                          value);
    cfg->journal_write_back = value[6] == 'b';
    cfg->journal_mode_line = st->line;
  }
  else if (strcmp (name, "bitmap-chunk") == 0) {
    if (raid_parse_size (value, &cfg->bitmap_chunk_bytes) == -1 ||
        cfg->bitmap_chunk_bytes < 4096 ||
        (cfg->bitmap_chunk_bytes & (cfg->bitmap_chunk_bytes - 1)) ||
        cfg->bitmap_chunk_bytes > (1ULL << 31))
      return config_fail (st, "bitmap-chunk '%s' is not a power of two from 4K to "
                   "2G", value);
    cfg->bitmap_chunk_line = st->line;
  }
  else if (strcmp (name, "write-behind") == 0) {
    cfg->write_behind_line = st->line;
    /* mdadm's --write-behind without a value means 256. */
    if (!*value) {
      cfg->write_behind = RAID_WRITE_BEHIND_DEFAULT;
      return 1;
    }
    return parse_count (st, name, value, 0, RAID_WRITE_BEHIND_MAX,
                        &cfg->write_behind);
  }
  else if (strcmp (name, "auto-readd") == 0) {
    if (parse_bool (value, &cfg->auto_readd) == -1)
      return config_fail (st, "auto-readd '%s' is not true or false", value);
  }
  else if (strcmp (name, "socket") == 0) {
    free (cfg->socket);
    cfg->socket = config_resolve_path (st, value);
  }
  else if (strcmp (name, "spare-group") == 0) {
    if (!*value || strpbrk (value, " \t"))
      return config_fail (st, "spare-group '%s' is not one word", value);
    free (cfg->spare_group);
    if (!(cfg->spare_group = strdup (value)))
      return config_fail (st, "%s", strerror (ENOMEM));
  }
  else if (strcmp (name, "state-dir") == 0) {
    free (cfg->state_dir);
    cfg->state_dir = config_resolve_path (st, value);
  }
  else if (strcmp (name, "scrub-fail-after") == 0) {
    char *end;

    errno = 0;
    cfg->scrub_fail_after = strtoull (value, &end, 10);
    if (errno || end == value || *end || value[0] == '-')
      return config_fail (st, "scrub-fail-after '%s' is not a count of sectors",
                   value);
  }
  else if (strcmp (name, "check-interval") == 0 ||
           strcmp (name, "check-budget") == 0) {
    if (raid_parse_duration (value, name[6] == 'i' ? &cfg->check_interval_s
                             : &cfg->check_budget_s) == -1)
      return config_fail (st, "%s '%s' is not a duration (like 90s, 10m, 6h, 7d)",
                   name, value);
  }
  else if (strcmp (name, "heartbeat") == 0) {
    if (strcmp (value, "off") == 0)
      cfg->heartbeat_ms = 0;
    else if (raid_parse_duration_ms (value, &cfg->heartbeat_ms) == -1 ||
             cfg->heartbeat_ms < 100 || cfg->heartbeat_ms > 60000)
      return config_fail (st, "heartbeat '%s' is not off or a duration from "
                          "100ms to 60s", value);
  }
  else if (strcmp (name, "speed-min") == 0 || strcmp (name, "speed-max") == 0) {
    if (raid_parse_size (value, strcmp (name, "speed-min") == 0
                         ? &cfg->speed_min : &cfg->speed_max) == -1)
      return config_fail (st, "%s '%s' is not a size per second (like 10M)", name,
                   value);
  }
  else if (strcmp (name, "controllers") == 0) {
    free (cfg->controllers);
    cfg->controllers = strdup (value);
  }
  else if (strcmp (name, "read-ahead") == 0) {
    if (strcmp (value, "off") == 0)
      cfg->read_ahead_bytes = 0;
    else if (raid_parse_size (value, &cfg->read_ahead_bytes) == -1 ||
             cfg->read_ahead_bytes > RAID_READ_AHEAD_MAX)
      return config_fail (st, "read-ahead '%s' is not off or a size up to 1G",
                          value);
  }
  else if (strcmp (name, "nbd-connections") == 0)
    return parse_count (st, name, value, 1, 64, &cfg->nbd_connections);
  else if (strcmp (name, "nbd-timeout") == 0)
    return parse_count (st, name, value, 1, 3600, &cfg->nbd_timeout_s);
  else if (strcmp (name, "nbd-connect-timeout") == 0)
    return parse_count (st, name, value, 1, 3600,
                        &cfg->nbd_connect_timeout_s);
  else
    return config_fail (st, "unknown key '%s' in [array]", name);
  return 1;
}

/* libinih keeps ';' comments only; we also allow "value   # comment". */
static void
strip_comment (char *v)
{
  char *p;

  for (p = v; *p; p++)
    if (*p == '#' && p > v && isspace ((unsigned char) p[-1])) {
      *p = '\0';
      break;
    }
  for (p = v + strlen (v); p > v && isspace ((unsigned char) p[-1]); p--)
    p[-1] = '\0';
}

/* Keys only the served (top) array takes. */
static bool
top_only (const char *name)
{
  static const char *const keys[] = {
    "socket", "controllers", "direct", "speed-min", "speed-max",
    "state-dir", "check-interval", "check-budget",
    "nbd-connections", "nbd-timeout", "nbd-connect-timeout", "auto-readd",
    "spare-group", "heartbeat", "read-ahead",
  };
  size_t i;

  for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (strcmp (name, keys[i]) == 0)
      return true;
  return false;
}

struct raid_config *
raid_config_find_group (const struct raid_config *top, const char *name)
{
  unsigned i;

  for (i = 0; i < top->ngroups; i++)
    if (strcmp (top->groups[i]->name, name) == 0)
      return top->groups[i];
  return NULL;
}

/* The nested array NAME, made on first mention. */
static struct raid_config *
group (struct parse_state *st, const char *name)
{
  struct raid_config *top = st->top, *g = raid_config_find_group (top, name),
    **grown;

  if (g)
    return g;
  grown = realloc (top->groups, (top->ngroups + 1) * sizeof *grown);
  g = calloc (1, sizeof *g);
  if (!grown || !g) {
    free (g);
    config_fail (st, "%s", strerror (ENOMEM));
    return NULL;
  }
  top->groups = grown;
  top->groups[top->ngroups++] = g;
  g->level = -1;
  g->top = top;
  g->file = strdup (top->file);
  g->name = strdup (name);
  g->bitmap = true;
  g->section_line = st->section_line;
  return g;
}

/* libinih's handler, for each key = value: find the section's array (a
 * nested one for [array NAME] and [members NAME]) and set the key. */
static int
handler (void *user, const char *section, const char *name,
         const char *value)
{
  struct parse_state *st = user;
  const char *sub = strchr (section, ' ');
  char v[INI_MAX_LINE + 1], kind[16];

  if (st->failed)
    return 0;
  snprintf (v, sizeof v, "%s", value);
  strip_comment (v);
  snprintf (kind, sizeof kind, "%.*s", sub ? (int) (sub - section)
            : (int) strlen (section), section);
  if (section[0] == '\0')
    return config_fail (st, "'%s' is outside any section", name);
  if (strcmp (kind, "array") != 0 && strcmp (kind, "members") != 0) {
    st->line = st->section_line;
    return config_fail (st, "unknown section [%s] (expected [array], [members], "
                 "or [array NAME] and [members NAME] for a nested array)",
                 section);
  }
  st->cfg = st->top;
  if (sub) {
    while (*sub == ' ')
      sub++;
    if (!*sub || strlen (sub) > 32 || strchr (sub, ' ')) {
      st->line = st->section_line;
      return config_fail (st, "[%s]: a nested array's name is one word of 1 to 32 "
                   "characters", section);
    }
    if (!(st->cfg = group (st, sub)))
      return 0;
    if (kind[0] == 'a' && top_only (name))
      return config_fail (st, "%s applies to the served array only ([array])",
                   name);
  }
  if (kind[0] == 'a')
    return set_array_key (st, name, v);
  if (strcmp (name, "member") == 0 || strcmp (name, "spare") == 0)
    return config_add_member (st, v, name[0] == 's');
  if (strcmp (name, "scan") == 0)
    return config_add_scan (st, v);
  if (strcmp (name, "journal") == 0)
    return config_add_journal (st, v);
  return config_fail (st,
                      "unknown key '%s' in [%s] (member, spare, scan or "
                      "journal)",
                      name, section);
}


/* libinih's reader: fgets, counting lines for messages and noting where
 * each [section] starts and whether a line was too long. */
static char *
reader (char *str, int num, void *stream)
{
  struct parse_state *st = stream;
  size_t len;

  if (!fgets (str, num, st->fp))
    return NULL;
  st->line++;
  if (str[strspn (str, " \t")] == '[')
    st->section_line = st->line;
  len = strlen (str);
  if (len == (size_t) num - 1 && str[len - 1] != '\n' && !feof (st->fp))
    st->line_too_long = true;
  return str;
}

/* Is word one of the words of list (separated by spaces or commas)? */
static bool
word_in (const char *list, const char *word)
{
  size_t n = strlen (word);
  const char *p = list;

  while ((p = strstr (p, word)) != NULL) {
    if ((p == list || isspace ((unsigned char) p[-1]) || p[-1] == ',') &&
        (p[n] == '\0' || isspace ((unsigned char) p[n]) || p[n] == ','))
      return true;
    p += n;
  }
  return false;
}

/* With controllers declared, every member's must be one of them. */
static void
check_controllers (struct parse_state *st, struct raid_member_spec *specs,
                   unsigned n)
{
  unsigned i;

  for (i = 0; i < n && !st->failed; i++)
    if (specs[i].controller &&
        !word_in (st->top->controllers, specs[i].controller)) {
      st->line = specs[i].line;
      config_fail (st, "controller '%s' is not one of those declared in [array] "
            "controllers (%s)", specs[i].controller, st->top->controllers);
    }
}

/* Cross-key checks once the whole file is read. */
static void
check_config (struct parse_state *st)
{
  struct raid_config *cfg = st->cfg;
  const struct raid_level *l;
  unsigned min;
  char lname[32];

  if (cfg->level < 0) {
    st->line = cfg->section_line;
    if (cfg == st->top)
      config_fail (st, "[array] level is missing");
    else
      config_fail (st, "[array %s] level is missing", cfg->name);
    return;
  }
  l = raid_level_find (cfg->level);
  st->line = cfg->layout_line;
  if (cfg->layout_line) {
    if (!l->layouts) {
      config_fail (st, "layout does not apply to RAID%d", cfg->level);
      return;
    }
    if (l->parse_layout (cfg->layout_name, &cfg->layout) == -1)
      config_fail (st, "layout '%s' is not a RAID%d layout (%s)",
            cfg->layout_name, cfg->level, l->layouts);
    if (st->failed)
      return;
  }
  else
    cfg->layout = l->default_layout;

  st->line = cfg->chunk_line;
  if (!l->has_chunk) {
    if (cfg->chunk_line) {
      config_fail (st, "chunk does not apply to RAID%d", cfg->level);
      return;
    }
    cfg->chunk_bytes = 0;
  }
  else if (!cfg->chunk_line)
    cfg->chunk_bytes = 512 * 1024;      /* mdadm's default */
  else if (cfg->chunk_bytes < RAID_MIN_CHUNK_BYTES ||
           cfg->chunk_bytes > RAID_MAX_CHUNK_BYTES ||
           (cfg->chunk_bytes & (cfg->chunk_bytes - 1))) {
    config_fail (st, "chunk %" PRIu64 " must be a power of two from 4K to 1G",
          cfg->chunk_bytes);
    return;
  }

  if (st->top->controllers) {
    check_controllers (st, cfg->members, cfg->nmembers);
    check_controllers (st, cfg->spares, cfg->nspares);
    if (st->failed)
      return;
  }

  /* md keeps no bitmap where there is nothing to resync. */
  if (l->tolerates (cfg->layout, cfg->nmembers) == 0)
    cfg->bitmap = false;

  st->line = cfg->level_line;
  min = l->min_members (cfg->layout);
  if (cfg->nmembers < min)
    config_fail (st, "RAID%d %s needs at least %u members; [members] lists "
          "%u", cfg->level,
          raid_layout_name (cfg->level, cfg->layout, lname, sizeof lname),
          min, cfg->nmembers);
  else
    config_check_flags (st, cfg, l);
  if (!st->failed)
    config_check_write_behind (st, cfg);
  if (!st->failed)
    config_check_ppl (st, cfg);
  if (!st->failed)
    config_check_journal (st, cfg);
}

/* Does g contain target, through its "array:" members?  depth bounds
 * the walk (a cycle never ends). */
static bool
contains (const struct raid_config *top, const struct raid_config *g,
          const struct raid_config *target, unsigned depth)
{
  unsigned i;

  if (depth > top->ngroups)
    return false;
  for (i = 0; i < g->nmembers; i++) {
    const char *name = raid_spec_array (g->members[i].path);
    const struct raid_config *child;
    if (!name || !(child = raid_config_find_group (top, name)))
      continue;
    if (child == target || contains (top, child, target, depth + 1))
      return true;
  }
  return false;
}

/* Nested arrays: every "array:NAME" member names a defined array, each
 * used once, none inside itself, none left unused. */
static void
check_nesting (struct parse_state *st)
{
  struct raid_config *top = st->top;
  unsigned c, i;

  for (c = 0; c <= top->ngroups && !st->failed; c++) {
    struct raid_config *cfg = c == 0 ? top : top->groups[c - 1];
    for (i = 0; i < cfg->nmembers + cfg->nspares && !st->failed; i++) {
      struct raid_member_spec *m = i < cfg->nmembers ? &cfg->members[i]
        : &cfg->spares[i - cfg->nmembers];
      const char *name = raid_spec_array (m->path);
      struct raid_config *g;
      if (!name)
        continue;
      st->line = m->line;
      g = raid_config_find_group (top, name);
      if (i >= cfg->nmembers)
        config_fail (st, "a spare cannot be an array (%s)", m->path);
      else if (!g)
        config_fail (st, "%s: no [array %s] in this config", m->path, m->path + 6);
      else if (g == cfg)
        config_fail (st, "%s contains itself", m->path);
      else if (contains (top, g, cfg, 0))
        config_fail (st, "%s makes a cycle: it contains array %s", m->path,
              cfg->name);
      else if (g->used)
        config_fail (st, "%s is a member twice", m->path);
      else
        g->used = true;
    }
  }
  for (c = 0; c < top->ngroups && !st->failed; c++)
    if (!top->groups[c]->used) {
      st->line = top->groups[c]->section_line;
      config_fail (st, "array %s is defined but no array has it as a member",
            top->groups[c]->name);
    }
}

/* The array's name when [array] gives none: the config file's name
 * without its directory or extension, at most 32 characters. */
static char *
default_name (const char *file)
{
  char *copy = strdup (file), *base, *dot, *name;

  if (!copy)
    return NULL;
  base = basename (copy);
  dot = strrchr (base, '.');
  if (dot && dot != base)
    *dot = '\0';
  name = strndup (base, 32);
  free (copy);
  return name;
}

int
raid_config_load (const char *file, struct raid_config *cfg, char *err,
                  size_t errlen)
{
  struct parse_state st = { .top = cfg, .cfg = cfg, .err = err,
    .errlen = errlen };
  char *abs = NULL;
  unsigned i;
  int r;

  memset (cfg, 0, sizeof *cfg);
  cfg->level = -1;
  cfg->nbd_connections = RAID_NBD_CONNECTIONS;
  cfg->nbd_timeout_s = RAID_NBD_TIMEOUT_S;
  cfg->nbd_connect_timeout_s = RAID_NBD_CONNECT_TIMEOUT_S;
  cfg->speed_min = 10 * 1024 * 1024;
  cfg->bitmap = true;
  cfg->heartbeat_ms = RAID_HEARTBEAT_MS;
  cfg->read_ahead_bytes = RAID_READ_AHEAD_AUTO;
  cfg->file = strdup (file);
  abs = realpath (file, NULL);
  st.fp = fopen (file, "re");
  if (!cfg->file || !abs || !st.fp) {
    snprintf (err, errlen, "%s: %s", file, strerror (errno));
    goto error;
  }
  st.dir = strdup (dirname (abs));
  r = ini_parse_stream (reader, &st, handler, &st);
  if (!st.failed && st.line_too_long)
    config_fail (&st, "line longer than %d characters", INI_MAX_LINE - 2);
  if (!st.failed && r > 0) {
    st.line = r;
    config_fail (&st, "syntax error (expected [section] or key = value)");
  }
  for (i = 0; !st.failed && i <= cfg->ngroups; i++) {
    st.cfg = i == 0 ? cfg : cfg->groups[i - 1];
    check_config (&st);
  }
  st.cfg = cfg;
  if (!st.failed)
    check_nesting (&st);
  /* Nested arrays open their members, and run, as the top one does. */
  for (i = 0; i < cfg->ngroups; i++) {
    struct raid_config *g = cfg->groups[i];
    g->direct = cfg->direct;
    g->nbd_connections = cfg->nbd_connections;
    g->nbd_timeout_s = cfg->nbd_timeout_s;
    g->nbd_connect_timeout_s = cfg->nbd_connect_timeout_s;
    g->speed_min = cfg->speed_min;
    g->speed_max = cfg->speed_max;
    g->auto_readd = cfg->auto_readd;
    g->heartbeat_ms = cfg->heartbeat_ms;
  }
  if (st.failed)
    goto error;
  if (!cfg->name && !(cfg->name = default_name (file)))
    goto error;
  fclose (st.fp);
  free (st.dir);
  free (abs);
  return 0;

 error:
  if (st.fp)
    fclose (st.fp);
  free (st.dir);
  free (abs);
  raid_config_free (cfg);
  return -1;
}

/* Free n member specs and the array that holds them. */
static void
free_specs (struct raid_member_spec *specs, unsigned n)
{
  unsigned i;

  for (i = 0; i < n; i++) {
    free (specs[i].path);
    free (specs[i].controller);
  }
  free (specs);
}

/* Free what raid_config_load allocated in cfg, nested arrays included,
 * and zero it. */
void
raid_config_free (struct raid_config *cfg)
{
  unsigned i;

  for (i = 0; i < cfg->ngroups; i++) {
    raid_config_free (cfg->groups[i]);
    free (cfg->groups[i]);
  }
  free (cfg->groups);
  free (cfg->file);
  free (cfg->name);
  free (cfg->layout_name);
  free (cfg->controllers);
  free (cfg->socket);
  free (cfg->spare_group);
  free (cfg->state_dir);
  free (cfg->journal_path);
  free_specs (cfg->members, cfg->nmembers);
  free_specs (cfg->spares, cfg->nspares);
  for (i = 0; i < cfg->nscan; i++)
    free (cfg->scan[i]);
  free (cfg->scan);
  memset (cfg, 0, sizeof *cfg);
}
