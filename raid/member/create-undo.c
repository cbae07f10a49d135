/* nbdraid: putting back what a failed nbdraid create overwrote. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "create-undo.h"

int
undo_save (struct create_undo *u, struct member *m, uint64_t off,
           size_t len)
{
  struct undo_entry e = { .m = m, .off = off, .len = len };

  if (u->n == u->cap) {
    size_t cap = u->cap ? 2 * u->cap : 16;
    struct undo_entry *p = realloc (u->e, cap * sizeof *p);
    if (!p)
      return -1;
    u->e = p;
    u->cap = cap;
  }
  e.path = strdup (m->name);
  if (!e.path || posix_memalign ((void **) &e.old, 4096, len) != 0) {
    free (e.path);
    errno = ENOMEM;
    return -1;
  }
  if (m->ops->pread (m, e.old, len, off) == -1) {
    free (e.path);
    free (e.old);
    return -1;
  }
  u->e[u->n++] = e;
  return 0;
}

int
undo_save_config (struct create_undo *u, const char *file)
{
  if (u->config_file)
    return 0;
  if (raid_config_save (file, &u->config) == -1)
    return -1;
  u->config_file = file;
  return 0;
}

void
undo_forget_member (struct create_undo *u, const struct member *m)
{
  size_t i;

  for (i = 0; i < u->n; i++)
    if (u->e[i].m == m)
      u->e[i].m = NULL;
}

/* Write one saved range back and flush it, reopening its member by path
 * if it was closed since. */
static int
restore (struct create_undo *u, const struct undo_entry *e, char *err,
         size_t errlen)
{
  struct member *m = e->m;
  int r;

  if (!m && !(m = member_open (e->path, &u->mo, err, errlen)))
    return -1;
  r = m->ops->pwrite (m, e->old, e->len, e->off) == -1 ||
    m->ops->flush (m) == -1 ? -1 : 0;
  if (r == -1)
    snprintf (err, errlen, "%s: putting back %zu bytes at %" PRIu64 ": %s",
              e->path, e->len, e->off, strerror (errno));
  if (!e->m)
    member_close (m);
  return r;
}

int
undo_replay (struct create_undo *u, bool open_only, char *err,
             size_t errlen)
{
  int r = 0;
  size_t i;

  for (i = u->n; i-- > 0;) {
    struct undo_entry *e = &u->e[i];
    if (e->len == 0 || (e->m != NULL) != open_only)
      continue;
    if (restore (u, e, err, errlen) == -1)
      r = -1;
    e->len = 0;                 /* done, whatever the outcome */
  }
  if (!open_only && u->config_file) {
    if (raid_config_restore (u->config_file, &u->config, err, errlen) == -1)
      r = -1;
    u->config_file = NULL;
  }
  return r;
}

/* Drop what was saved (bytes and config text) without putting it back. */
void
undo_free (struct create_undo *u)
{
  size_t i;

  for (i = 0; i < u->n; i++) {
    free (u->e[i].path);
    free (u->e[i].old);
  }
  free (u->e);
  u->e = NULL;
  u->n = u->cap = 0;
  raid_config_text_free (&u->config);
  u->config_file = NULL;
}
