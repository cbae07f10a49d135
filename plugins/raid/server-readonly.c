/* nbdkit-raid-plugin: was nbdkit started with -r?
 *
 * nbdkit -r stops clients from writing but does not tell the plugin
 * before the first connection (.open's readonly flag), and the array
 * must know at assembly: a read-only server must not write superblocks,
 * bitmaps, resyncs or rebuilds either.  So read nbdkit's command line
 * (/proc/self/cmdline) for -r, --readonly or --read-only, or r in a
 * cluster of short options (-fr).
 */
#include <config.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "server-readonly.h"

/* nbdkit 1.32's short options; those before ':' take an argument. */
#define SHORT_OPTIONS "D:e:fg:i:nop:P:rst:u:U:vV"

/* Does arg, a cluster of short options (-fr), hold r before any option
 * that takes an argument? */
static bool
cluster_has_r (const char *arg)
{
  const char *c, *opt;

  if (arg[0] != '-' || arg[1] == '-' || arg[1] == '\0')
    return false;
  for (c = arg + 1; *c; c++) {
    opt = strchr (SHORT_OPTIONS, *c);
    if (!opt || *c == ':')
      return false;             /* not an option cluster */
    if (*c == 'r')
      return true;
    if (opt[1] == ':')
      return false;             /* the rest is this option's argument */
  }
  return false;
}

/* Whether nbdkit's command line has -r, --readonly or --read-only;
 * false if it cannot be read. */
bool
server_readonly (void)
{
  char buf[65536], *arg;
  size_t len;
  FILE *fp = fopen ("/proc/self/cmdline", "r");

  if (!fp)
    return false;
  len = fread (buf, 1, sizeof buf - 1, fp);
  fclose (fp);
  buf[len] = '\0';
  /* Arguments are NUL-separated; skip argv[0]. */
  for (arg = buf + strlen (buf) + 1; arg < buf + len;
       arg += strlen (arg) + 1)
    if (strcmp (arg, "--readonly") == 0 || strcmp (arg, "--read-only") == 0
        || cluster_has_r (arg))
      return true;
  return false;
}
