/* nbdraid: rebuilding a member of the copies family (RAID1, RAID10):
 * each of its units read from another usable copy.
 */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "copies.h"
#include "levels.h"

/* The copy member m's unit mu is rebuilt from, for its bytes up to
 * end_within: another usable one.  NULL if no copy is left. */
static const struct place *
rebuild_source (const struct raid_array *a, const struct members_view *v,
                const struct member_set *gone, unsigned m, uint64_t unit,
                uint64_t end_within, struct place *places)
{
  unsigned n = geometry_unit_places (&a->geo, unit, places), i;

  for (i = 0; i < n; i++)
    if (places[i].disk != m && copies_place_usable (a, v, gone, &places[i],
                                             end_within))
      return &places[i];
  return NULL;
}

/* Call fn for each unit-sized piece [lo, hi) of member m's range
 * [off, off+len), with the place it is rebuilt from (NULL for space
 * that holds no unit: it reads as zeros); stop at the first that
 * does not return 0. */
static int
each_source (struct raid_array *a, unsigned m, uint64_t off, uint64_t len,
             const struct member_set *gone,
             int (*fn) (struct raid_array *a, const struct place *from,
                        uint64_t lo, uint64_t hi, uint64_t within,
                        void *opaque),
             void *opaque)
{
  const struct raid_geometry *g = &a->geo;
  struct place places[RAID_MAX_MEMBERS];
  const struct place *from;
  struct members_view v;
  uint64_t mu, unit;
  int r = 0;

  array_view (a, &v);
  for (mu = off / g->unit_bytes;
       r == 0 && mu <= (off + len - 1) / g->unit_bytes; mu++) {
    uint64_t lo = mu * g->unit_bytes > off ? mu * g->unit_bytes : off;
    uint64_t hi = (mu + 1) * g->unit_bytes < off + len
      ? (mu + 1) * g->unit_bytes : off + len;

    from = NULL;
    if (geometry_unit_at (g, m, mu, &unit)) {
      from = rebuild_source (a, &v, gone, m, unit, hi - mu * g->unit_bytes,
                             places);
      if (!from) {
        errno = EIO;            /* no copy left to rebuild it from */
        return -1;
      }
    }
    r = fn (a, from, lo, hi, lo - mu * g->unit_bytes, opaque);
  }
  return r;
}

struct rebuild_reads {
  uint64_t off;
  uint8_t *out;
  struct io_batch b;
};

/* each_source's fn for reconstruct: add a read of the piece from its
 * source copy into out, or zero it where no unit lives. */
static int
add_source_read (struct raid_array *a, const struct place *from,
                 uint64_t lo, uint64_t hi, uint64_t within, void *opaque)
{
  struct rebuild_reads *r = opaque;

  if (!from) {
    memset (r->out + (lo - r->off), 0, hi - lo);
    return 0;
  }
  return io_batch_add (&r->b, IO_READ, from->disk,
                       from->member_unit * a->geo.unit_bytes + within,
                       hi - lo, r->out + (lo - r->off));
}

/* What member m should hold at [off, off+len): each of its units read
 * from another copy; space that holds no unit reads as zeros. */
int
copies_reconstruct (struct raid_array *a, unsigned m, uint64_t off,
                    uint64_t len, const struct member_set *gone,
                    uint8_t *out, struct scratch *scratch)
{
  struct rebuild_reads r = { .off = off, .out = out };
  int ret = -1;

  /* A write-mostly source must hold what the others hold. */
  behind_drain (a);
  io_batch_init (&r.b);
  if (each_source (a, m, off, len, gone, add_source_read, &r))
    goto out;
  if (array_run (a, &r.b)) {
    errno = EIO;
    goto out;
  }
  ret = 0;
 out:
  io_batch_free (&r.b);
  return ret;
}

/* 0 (go on) while the sources are holes, 1 at the first that is not. */
static int
source_hole (struct raid_array *a, const struct place *from, uint64_t lo,
             uint64_t hi, uint64_t within, void *opaque)
{
  return from && !array_member_hole (a, from->disk, from->member_unit *
                                     a->geo.unit_bytes + within, hi - lo);
}

/* Where no copy is left, reconstruct will say so. */
bool
copies_unwritten (struct raid_array *a, unsigned m, uint64_t off,
                  uint64_t len, const struct member_set *gone)
{
  return each_source (a, m, off, len, gone, source_hole, NULL) == 0;
}

/* The lock keys of member m's units first..last: the array units they
 * hold (space that holds none has no key). */
void
copies_member_keys (const struct raid_array *a, unsigned m, uint64_t first,
                    uint64_t last, void (*fn) (void *, uint64_t),
                    void *opaque)
{
  uint64_t mu, unit;

  for (mu = first; mu <= last; mu++)
    if (geometry_unit_at (&a->geo, m, mu, &unit))
      fn (opaque, unit);
}
