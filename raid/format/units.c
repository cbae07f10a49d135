/* nbdraid: sizes and durations as admins write them ("64K", "1GiB",
 * "90s", "6h", "2d"), in the config file and on nbdraid's and nbdkit's
 * command lines. */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "raid.h"

int
raid_parse_size (const char *s, uint64_t *bytes)
{
  static const char suffixes[] = "KMGT";
  const char *p;
  char *end;
  uint64_t v;
  int shift = 0;

  if (!isdigit ((unsigned char) *s))
    return -1;
  errno = 0;
  v = strtoull (s, &end, 10);
  if (errno)
    return -1;
  if (*end) {
    p = strchr (suffixes, toupper ((unsigned char) *end));
    if (!p || !*p)
      return -1;
    shift = 10 * (int) (p - suffixes + 1);
    end++;
    if (strcasecmp (end, "") != 0 && strcasecmp (end, "B") != 0 &&
        strcasecmp (end, "iB") != 0)
      return -1;
  }
  if (shift && v > (UINT64_MAX >> shift))
    return -1;
  *bytes = v << shift;
  return 0;
}

int
raid_parse_duration (const char *s, uint64_t *seconds)
{
  static const struct {
    char suffix;
    uint64_t seconds;
  } units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
                { 'w', 7 * 86400 } };
  uint64_t v, mult = 1;
  char *end;
  size_t i;

  if (!isdigit ((unsigned char) *s))
    return -1;
  errno = 0;
  v = strtoull (s, &end, 10);
  if (errno)
    return -1;
  if (*end) {
    for (i = 0; i < sizeof units / sizeof units[0] &&
         units[i].suffix != tolower ((unsigned char) *end); i++)
      ;
    if (i == sizeof units / sizeof units[0] || end[1])
      return -1;
    mult = units[i].seconds;
  }
  if (v > UINT64_MAX / mult)
    return -1;
  *seconds = v * mult;
  return 0;
}
