/* nbdraid: what a member line of the config names: a device or file
 * by its path, an NBD export by its URI, or a nested array
 * ("array:NAME", an [array NAME] section of the same file).
 */
#include <config.h>

#include <string.h>
#include <strings.h>

#include "raid.h"

#define ARRAY_PREFIX "array:"

/* Is spec an NBD URI, rather than a path or a nested array?  In any
 * case: a URI's scheme is case-insensitive (RFC 3986). */
bool
raid_spec_is_uri (const char *spec)
{
  return strncasecmp (spec, "nbd://", 6) == 0 ||
    strncasecmp (spec, "nbds://", 7) == 0 ||
    strncasecmp (spec, "nbd+unix://", 11) == 0 ||
    strncasecmp (spec, "nbds+unix://", 12) == 0;
}

const char *
raid_spec_array (const char *spec)
{
  return strncmp (spec, ARRAY_PREFIX, strlen (ARRAY_PREFIX)) == 0
    ? spec + strlen (ARRAY_PREFIX) : NULL;
}
