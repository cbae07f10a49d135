/* nbdraid scan: find md arrays on devices and print a config for
 * each, like mdadm --examine --scan, so an array whose disks moved, or
 * whose config was lost, can be served again.
 */
#include <config.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "scan.h"

#define SCAN_USAGE "nbdraid scan [--json] DEVICE|DIR|GLOB|URI..."

/* Configs in the order of their arrays' names (then UUIDs). */
static int
by_name (const void *x, const void *y)
{
  const struct scan_array *a = *(struct scan_array *const *) x;
  const struct scan_array *b = *(struct scan_array *const *) y;
  int c = strcmp (a->name, b->name);

  return c ? c : strcmp (a->ref->uuid, b->ref->uuid);
}

/* The arrays that get a config of their own: those not nested in
 * another's, sorted.  NULL out of memory. */
static struct scan_array **
configs (const struct scan_set *set, size_t *n)
{
  struct scan_array **top = calloc (set->narrays + 1, sizeof *top);
  size_t i;

  *n = 0;
  if (!top)
    return NULL;
  for (i = 0; i < set->narrays; i++)
    if (!set->arrays[i]->outer)
      top[(*n)++] = set->arrays[i];
  qsort (top, *n, sizeof *top, by_name);
  return top;
}

/* Two arrays of one name would share a default control socket, and an
 * admin telling them apart needs their UUIDs. */
static void
warn_same_names (struct scan_array *const *top, size_t n)
{
  size_t i;

  for (i = 1; i < n; i++)
    if (strcmp (top[i - 1]->name, top[i]->name) == 0)
      fprintf (stderr, "nbdraid: two arrays are named '%s': %s and %s; "
               "give one another name (or socket) in its config\n",
               top[i]->name, top[i - 1]->ref->uuid, top[i]->ref->uuid);
}

int
cmd_scan (int argc, char **argv)
{
  static const struct option longopts[] = {
    { "json", no_argument, NULL, 'j' },
    { NULL, 0, NULL, 0 },
  };
  struct scan_paths paths;
  struct scan_set set = { 0 };
  struct scan_array **top = NULL;
  bool json = false;
  size_t i, n = 0;
  int c, status = 1;

  while ((c = getopt_long (argc, argv, "", longopts, NULL)) != -1) {
    if (c != 'j') {
      fprintf (stderr, "usage: %s\n", SCAN_USAGE);
      return 2;
    }
    json = true;
  }
  /* No default: scanning every disk of the host is not for a tool to
   * do unasked. */
  if (optind == argc) {
    fprintf (stderr, "usage: %s\n", SCAN_USAGE);
    return 2;
  }
  if (scan_args_expand (argc - optind, argv + optind, &paths) == -1) {
    fprintf (stderr, "nbdraid: out of memory\n");
    return 1;
  }
  for (i = 0; i < paths.n; i++)
    if (scan_add_device (&set, paths.path[i]) == -1)
      goto out;
  if (scan_find_arrays (&set) == -1)
    goto out;
  top = configs (&set, &n);
  if (!top) {
    fprintf (stderr, "nbdraid: out of memory\n");
    goto out;
  }
  if (n == 0) {
    fprintf (stderr, "nbdraid: no md array found on the %zu device%s "
             "scanned\n", paths.n, paths.n == 1 ? "" : "s");
    goto out;
  }
  warn_same_names (top, n);
  if (json)
    scan_print_json (stdout, top, n);
  else
    for (i = 0; i < n; i++)
      scan_print_config (stdout, top[i]);
  status = 0;
 out:
  free (top);
  scan_set_free (&set);
  scan_paths_free (&paths);
  return status;
}
