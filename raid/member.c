/* nbdraid: member backend selection. */
#include <config.h>

#include <stdlib.h>

#include "member.h"

struct member *
member_open (const char *spec, const struct member_open_options *opts,
             char *err, size_t errlen)
{
  return member_file_open (spec, opts, err, errlen);
}

void
member_close (struct member *m)
{
  if (m)
    m->ops->close (m);
}
