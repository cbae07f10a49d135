/* nbdraid scan: from its arguments to the devices to examine. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scan.h"

/* The devices so far, and what each is underneath (its realpath, or
 * the URI), to keep a device named twice once. */
struct collect {
  struct scan_paths *paths;
  char **seen;
};

/* Keep path (absolute, or a URI) under the name seen, unless seen is
 * kept already.  Takes both strings.  0, or -1 out of memory. */
static int
keep (struct collect *c, char *path, char *seen)
{
  struct scan_paths *p = c->paths;
  char **grown;
  size_t i;

  if (!path || !seen)
    goto drop;
  for (i = 0; i < p->n; i++)
    if (strcmp (c->seen[i], seen) == 0) {
      free (path);
      free (seen);
      return 0;
    }
  grown = realloc (p->path, (p->n + 1) * sizeof *grown);
  if (!grown)
    goto drop;
  p->path = grown;
  grown = realloc (c->seen, (p->n + 1) * sizeof *grown);
  if (!grown)
    goto drop;
  c->seen = grown;
  p->path[p->n] = path;
  c->seen[p->n++] = seen;
  return 0;

 drop:
  free (path);
  free (seen);
  return -1;
}

/* path made absolute without resolving its last name: a config should
 * say /dev/disk/by-id/NAME, which stays when the disk moves, and not
 * the /dev/sdX it points to today.  NULL out of memory. */
static char *
absolute (const char *path)
{
  char *copy, *dir, *r = NULL;

  if (path[0] == '/')
    return strdup (path);
  copy = strdup (path);
  if (!copy)
    return NULL;
  dir = realpath (dirname (copy), NULL);
  free (copy);
  copy = strdup (path);
  if (dir && copy && asprintf (&r, "%s/%s", strcmp (dir, "/") ? dir : "",
                               basename (copy)) == -1)
    r = NULL;
  free (dir);
  free (copy);
  return r;
}

/* Keep a regular file or block device; other kinds are skipped, with a
 * word on stderr when named by an argument (quiet: a directory's entry
 * or a glob's match).  0, or -1 out of memory. */
static int
add_device (struct collect *c, const char *path, const struct stat *st,
            bool quiet)
{
  char *abs, *real;

  if (!S_ISREG (st->st_mode) && !S_ISBLK (st->st_mode)) {
    if (!quiet)
      fprintf (stderr, "nbdraid: %s: not a regular file, block device "
               "or directory; skipped\n", path);
    return 0;
  }
  abs = absolute (path);
  real = realpath (path, NULL);
  if (!real && abs)             /* gone since stat: kept, examine says */
    real = strdup (abs);
  return keep (c, abs, real);
}

/* qsort by name, in byte order (ls in the C locale). */
static int
by_name (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Keep the regular files and block devices directly in dir. */
static int
add_directory (struct collect *c, const char *dir)
{
  DIR *d = opendir (dir);
  struct dirent *e;
  char **names = NULL, **grown, *path;
  size_t n = 0, i, dirlen = strlen (dir);
  struct stat st;
  int r = 0;

  if (!d) {
    fprintf (stderr, "nbdraid: %s: opendir: %s\n", dir, strerror (errno));
    return 0;
  }
  while ((e = readdir (d)) != NULL) {
    if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
      continue;
    grown = realloc (names, (n + 1) * sizeof *names);
    if (!grown || !(grown[n] = strdup (e->d_name))) {
      names = grown ? grown : names;
      r = -1;
      break;
    }
    names = grown;
    n++;
  }
  closedir (d);
  while (dirlen > 0 && dir[dirlen - 1] == '/')    /* no "dir//name" */
    dirlen--;
  qsort (names, n, sizeof *names, by_name);
  for (i = 0; i < n; i++) {
    if (r == 0 && asprintf (&path, "%.*s/%s", (int) dirlen, dir,
                            names[i]) == -1)
      r = -1;
    else if (r == 0) {
      if (stat (path, &st) == 0)
        r = add_device (c, path, &st, true);
      free (path);
    }
    free (names[i]);
  }
  free (names);
  return r;
}

/* Keep what a glob pattern matches, as a directory's entries. */
static int
add_glob (struct collect *c, const char *pattern)
{
  glob_t g;
  struct stat st;
  size_t i;
  int r = 0;

  switch (glob (pattern, 0, NULL, &g)) {
  case 0:
    break;
  case GLOB_NOMATCH:
    fprintf (stderr, "nbdraid: %s: no such file, and matches nothing\n",
             pattern);
    return 0;
  case GLOB_NOSPACE:
    return -1;
  default:
    fprintf (stderr, "nbdraid: %s: glob: read error\n", pattern);
    return 0;
  }
  for (i = 0; i < g.gl_pathc && r == 0; i++)
    if (stat (g.gl_pathv[i], &st) == 0)
      r = add_device (c, g.gl_pathv[i], &st, true);
  globfree (&g);
  return r;
}

/* One argument: a URI, a file or device, a directory, or a glob. */
static int
add_argument (struct collect *c, const char *arg)
{
  struct stat st;

  if (raid_spec_is_uri (arg))
    return keep (c, strdup (arg), strdup (arg));
  if (stat (arg, &st) == 0)
    return S_ISDIR (st.st_mode) ? add_directory (c, arg)
      : add_device (c, arg, &st, false);
  if (errno == ENOENT && strpbrk (arg, "*?["))
    return add_glob (c, arg);
  fprintf (stderr, "nbdraid: %s: %s\n", arg, strerror (errno));
  return 0;
}

int
scan_args_expand (int argc, char **argv, struct scan_paths *paths)
{
  struct collect c = { .paths = paths };
  int i, r = 0;

  paths->path = NULL;
  paths->n = 0;
  for (i = 0; i < argc && r == 0; i++)
    r = add_argument (&c, argv[i]);
  for (i = 0; (size_t) i < paths->n; i++)
    free (c.seen[i]);
  free (c.seen);
  return r;
}

void
scan_paths_free (struct scan_paths *paths)
{
  size_t i;

  for (i = 0; i < paths->n; i++)
    free (paths->path[i]);
  free (paths->path);
}
