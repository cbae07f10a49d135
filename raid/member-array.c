/* nbdraid: members that are arrays themselves (nested arrays: RAID0
 * over RAID5 or RAID6 groups, and so on), called in-process: no NBD
 * hop, no copy.  The outer array's superblock lives at the start of the
 * inner array's data, as with md stacking one md device on others.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "member.h"
#include "raid.h"

static struct raid_array *
inner (struct member *m)
{
  return m->priv;
}

static int
array_member_pread (struct member *m, void *buf, size_t len, uint64_t off)
{
  return raid_read (inner (m), buf, len, off);
}

static int
array_member_pwrite (struct member *m, const void *buf, size_t len,
                     uint64_t off)
{
  return raid_write (inner (m), buf, len, off, false);
}

static int
array_member_flush (struct member *m)
{
  return raid_flush (inner (m));
}

static int
array_member_zero (struct member *m, uint64_t len, uint64_t off)
{
  return raid_zero (inner (m), len, off, false);
}

struct first_extent {
  bool got, hole;
  uint64_t len;
};

/* Keep the inner array's first extent and stop it there. */
static int
note_first (void *opaque, uint64_t offset, uint64_t len, bool hole)
{
  struct first_extent *e = opaque;

  *e = (struct first_extent) { .got = true, .hole = hole, .len = len };
  return -1;
}

static int
array_member_extent (struct member *m, uint64_t len, uint64_t off,
                     uint64_t *run)
{
  struct first_extent e = { .got = false };

  if (raid_extents (inner (m), len, off, note_first, &e) == -1 && !e.got)
    return -1;
  *run = e.len < len ? e.len : len;
  return e.hole;
}

/* The wrapper goes; the inner array belongs to the outer one. */
static void
array_member_close (struct member *m)
{
  free (m->name);
  free (m);
}

static const struct member_ops array_ops = {
  .kind = "array",
  .pread = array_member_pread,
  .pwrite = array_member_pwrite,
  .flush = array_member_flush,
  .zero = array_member_zero,
  .extent = array_member_extent,
  .close = array_member_close,
};

struct member *
member_array_open (const char *spec, const struct member_open_options *opts,
                   char *err, size_t errlen)
{
  struct raid_array *a;
  struct member *m;

  if (!opts->resolve) {
    snprintf (err, errlen, "%s: nested arrays are not available here", spec);
    return NULL;
  }
  a = opts->resolve (opts->resolve_ctx, spec + strlen ("array:"), err,
                     errlen);
  if (!a)
    return NULL;
  m = calloc (1, sizeof *m);
  if (!m || !(m->name = strdup (spec))) {
    free (m);
    snprintf (err, errlen, "%s: %s", spec, strerror (ENOMEM));
    return NULL;
  }
  m->ops = &array_ops;
  m->priv = a;
  m->size_bytes = raid_size (a);
  m->identity[1] = (uint64_t) (uintptr_t) a;
  m->service_ns = 1000000;      /* it fans out to its own members */
  return m;
}

struct raid_array *
member_array_inner (const struct member *m)
{
  return m && m->ops == &array_ops ? m->priv : NULL;
}
