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

/* How far a walk of the inner array's extents has come, and whether
 * all it has seen is holes. */
struct hole_walk {
  uint64_t end;
  bool holes;
};

/* raid_extents callback: note the extent in the walk. */
static int
note_hole (void *opaque, uint64_t offset, uint64_t len, bool hole)
{
  struct hole_walk *w = opaque;

  w->holes &= hole;
  w->end = offset + len;
  return 0;
}

/* Whether the inner array reports the whole range as holes (-1:
 * error).  raid_extents may stop short of the range (it looks at a
 * bounded number of units a call): ask again from where it stopped,
 * until the range is covered or something in it is data. */
static int
array_member_is_hole (struct member *m, uint64_t len, uint64_t off)
{
  struct hole_walk w = { .end = off, .holes = true };

  while (w.holes && w.end < off + len)
    if (raid_extents (inner (m), off + len - w.end, w.end, note_hole, &w)
        == -1)
      return -1;
  return w.holes;
}

/* The wrapper goes; the inner array belongs to the outer one. */
static void
array_member_close (struct member *m)
{
  free (m->name);
  free (m);
}

/* A nested array that grew (its own grow, group by group) serves more:
 * the array above sees it at its grow --size. */
static int
array_member_refresh_size (struct member *m)
{
  __atomic_store_n (&m->size_bytes, raid_size (m->priv), __ATOMIC_RELEASE);
  return 0;
}

static const struct member_ops array_ops = {
  .kind = "array",
  .pread = array_member_pread,
  .pwrite = array_member_pwrite,
  .flush = array_member_flush,
  .zero = array_member_zero,
  .is_hole = array_member_is_hole,
  .refresh_size = array_member_refresh_size,
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
