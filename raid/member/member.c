/* nbdraid: member backend selection.  Files and block devices, and NBD
 * exports, are this layer's; nested arrays belong to the layer above,
 * which opens them through the open options. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config-file.h"
#include "member.h"
#include "raid.h"

void
member_options_from_config (const struct raid_config *cfg, bool readonly,
                            struct member_open_options *mo)
{
  *mo = (struct member_open_options) {
    .readonly = readonly,
    .direct = cfg->direct,
    .nbd_connections = cfg->nbd_connections,
    .nbd_timeout_s = cfg->nbd_timeout_s,
    .connect_timeout_s = cfg->nbd_connect_timeout_s,
  };
}

struct member *
member_open (const char *spec, const struct member_open_options *opts,
             char *err, size_t errlen)
{
  const char *nested = raid_spec_array (spec);

  if (nested && !opts->open_nested) {
    snprintf (err, errlen, "%s: nested arrays are not available here", spec);
    return NULL;
  }
  if (nested)
    return opts->open_nested (opts->nested_ctx, spec, nested, err, errlen);
  if (raid_spec_is_uri (spec))
    return member_nbd_open (spec, opts, err, errlen);
  return member_file_open (spec, opts, err, errlen);
}

/* Close m through its backend; NULL is ignored. */
void
member_close (struct member *m)
{
  if (m)
    m->ops->close (m);
}

int
member_refresh_size (struct member *m, bool *fixed, char *err,
                     size_t errlen)
{
  *fixed = !m->ops->refresh_size;
  if (*fixed)
    return 0;
  if (m->ops->refresh_size (m) == -1) {
    snprintf (err, errlen, "%s: reading its size: %s", m->name,
              strerror (errno));
    return -1;
  }
  return 0;
}

bool
member_is (const struct member *m, const char *path)
{
  return member_identity_is (m->identity, path);
}

bool
member_identity_is (const uint64_t identity[2], const char *path)
{
  struct stat st;
  uint64_t id[2];

  if (stat (path, &st) == -1 || !(identity[0] || identity[1]))
    return false;
  id[0] = S_ISBLK (st.st_mode) ? 0 : st.st_dev;
  id[1] = S_ISBLK (st.st_mode) ? st.st_rdev : st.st_ino;
  return id[0] == identity[0] && id[1] == identity[1];
}

bool
member_find_duplicate (struct member *const *members, unsigned n,
                       unsigned *a, unsigned *b)
{
  unsigned i, j;

  for (i = 0; i < n; i++)
    for (j = i + 1; j < n; j++) {
      const struct member *x = members[i], *y = members[j];
      if (x && y && (x->identity[0] || x->identity[1]) &&
          x->identity[0] == y->identity[0] &&
          x->identity[1] == y->identity[1]) {
        *a = i;
        *b = j;
        return true;
      }
    }
  return false;
}
