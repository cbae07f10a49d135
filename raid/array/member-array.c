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

#include "array.h"

/* The array a member stands for. */
static struct raid_array *
inner (struct member *m)
{
  return m->priv;
}

/* Read from the inner array: the member's offsets are the array's. */
static int
array_member_pread (struct member *m, void *buf, size_t len, uint64_t off)
{
  return raid_read (inner (m), buf, len, off);
}

/* Write to the inner array (the outer array's flush reaches it). */
static int
array_member_pwrite (struct member *m, const void *buf, size_t len,
                     uint64_t off)
{
  return raid_write (inner (m), buf, len, off, false);
}

/* Flush every member of the inner array. */
static int
array_member_flush (struct member *m)
{
  return raid_flush (inner (m));
}

/* Zero a range of the inner array (whole stripes deallocated). */
static int
array_member_zero (struct member *m, uint64_t len, uint64_t off)
{
  return raid_zero (inner (m), len, off, false);
}

/* raid_extents callback: *opaque ends 1 only if every extent reported
 * is a hole. */
static int
note_hole (void *opaque, uint64_t offset, uint64_t len, bool hole)
{
  *(int *) opaque = hole && *(int *) opaque != 0;
  return 0;
}

/* Whether the inner array reports the range as holes (-1: error). */
static int
array_member_is_hole (struct member *m, uint64_t len, uint64_t off)
{
  int hole = -2;

  /* The inner array's first extent answers for the whole range only if
   * it covers it; otherwise say "may hold data". */
  if (raid_extents (inner (m), len, off, note_hole, &hole) == -1)
    return -1;
  return hole == 1;
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
  .is_hole = array_member_is_hole,
  .close = array_member_close,
};

struct member *
member_array_open (struct raid_array *a, const char *spec, char *err,
                   size_t errlen)
{
  struct member *m = calloc (1, sizeof *m);

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
