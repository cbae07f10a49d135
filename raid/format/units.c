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
raid_parse_duration_ms (const char *s, uint64_t *ms)
{
  static const struct {
    const char *suffix;
    uint64_t ms;
  } units[] = { { "", 1000 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 },
                { "h", 3600000 }, { "d", 86400000 },
                { "w", 7 * 86400000ULL } };
  uint64_t v;
  char *end;
  size_t i;

  if (!isdigit ((unsigned char) *s))
    return -1;
  errno = 0;
  v = strtoull (s, &end, 10);
  if (errno)
    return -1;
  for (i = 0; i < sizeof units / sizeof units[0] &&
       strcasecmp (units[i].suffix, end) != 0; i++)
    ;
  if (i == sizeof units / sizeof units[0] || v > UINT64_MAX / units[i].ms)
    return -1;
  *ms = v * units[i].ms;
  return 0;
}

/* Whole seconds only. */
int
raid_parse_duration (const char *s, uint64_t *seconds)
{
  uint64_t ms;

  if (raid_parse_duration_ms (s, &ms) == -1 || ms % 1000)
    return -1;
  *seconds = ms / 1000;
  return 0;
}
