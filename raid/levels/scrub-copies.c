/* nbdraid: resync and check for the copies family (RAID0, RAID1,
 * RAID10).
 *
 * A resync copies each unit's first usable copy over the others; a
 * check reads every usable copy and compares them page by page, as md
 * counts mismatch_cnt, and a repair rewrites the copies that differ.
 * Both go a window of units at a time, the units held alone, and pass
 * by units whose copies are all holes.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "copies.h"
#include "levels.h"
#include "parity.h"

/* Bytes of units handled per sync or check round: big enough for
 * sequential member I/O, small enough to bound memory. */
#define WINDOW_BYTES (8 * 1024 * 1024)

/* Units in the array, the last one perhaps short (RAID1). */
static uint64_t
array_units (const struct raid_array *a)
{
  return (a->geo.array_bytes + a->geo.unit_bytes - 1) / a->geo.unit_bytes;
}

/* Bytes of unit u (the last one may be short, for RAID1). */
static uint64_t
unit_len (const struct raid_array *a, uint64_t u)
{
  uint64_t left = a->geo.array_bytes - u * a->geo.unit_bytes;
  return left < a->geo.unit_bytes ? left : a->geo.unit_bytes;
}

/* The copies family resyncs by unit: the unit holding offset. */
uint64_t
copies_sync_unit_of (const struct raid_array *a, uint64_t offset)
{
  return offset / a->geo.unit_bytes;
}

/* The copies family resyncs every unit of the array. */
uint64_t
copies_sync_units (const struct raid_array *a)
{
  return array_units (a);
}

/* The copy of unit places[] a round reads first and copies over the
 * others (copies_sync_source), or n if none. */
static unsigned
first_usable (const struct raid_array *a, const struct members_view *v,
              const struct place *places, unsigned n, uint64_t len)
{
  struct member_set none = { { 0 } };
  const struct place *p = copies_sync_source (a, v, &none, places, n, len);

  return p ? (unsigned) (p - places) : n;
}

/* Are all copies of a unit in holes, on members all in use?  Then they
 * agree (zeros): resync and check pass the unit by, and sparse members
 * stay sparse. */
static bool
unit_in_holes (struct raid_array *a, const struct place *places,
               unsigned n, uint64_t len)
{
  unsigned c;

  for (c = 0; c < n; c++)
    if (slot_state (&a->slots[places[c].disk]) != SLOT_ACTIVE ||
        !array_member_hole (a, places[c].disk,
                            places[c].member_unit * a->geo.unit_bytes, len))
      return false;
  return true;
}

/* Check one page of unit u, plen bytes at p into it and at off in each
 * copy's buffer, across its usable copies (use): count the sectors of
 * every copy that differs from the reference and with repair rewrite
 * them.  The reference is the value more than half the copies hold
 * (three copies outvote a bad one, which is named); without such a
 * majority it is the first copy, md's way, and the copies that
 * disagree are named together. */
static int
check_page (struct raid_array *a, const struct members_view *v, uint64_t u,
            const struct place *use, uint8_t *const *buf, unsigned nuse,
            uint64_t off, uint64_t p, uint64_t plen, bool repair,
            uint64_t *mismatches, struct io_batch *writes)
{
  const uint64_t sectors = (plen + 511) / 512;
  unsigned c, d, votes, best = 0, best_votes = 0;
  struct member_set suspects = { { 0 } };
  bool majority;

  for (c = 1; c < nuse && !memcmp (buf[0] + off, buf[c] + off, plen); c++)
    ;
  if (c == nuse)
    return 0;                   /* all agree */
  for (c = 0; c < nuse; c++) {
    for (votes = 0, d = 0; d < nuse; d++)
      votes += !memcmp (buf[c] + off, buf[d] + off, plen);
    if (votes > best_votes) {
      best = c;
      best_votes = votes;
    }
  }
  majority = 2 * best_votes > nuse;
  if (!majority)
    best = 0;
  for (c = 0; c < nuse; c++) {
    if (!memcmp (buf[best] + off, buf[c] + off, plen))
      continue;
    *mismatches += sectors;
    member_set_add (&suspects, use[c].disk);
    if (majority)
      array_note_mismatch (a, u, (int) use[c].disk, NULL, sectors);
    if (repair &&
        view_add_write (v, writes, IO_WRITE, use[c].disk,
                        use[c].member_unit * a->geo.unit_bytes + p, plen,
                        buf[best] + off))
      return -1;
  }
  if (!majority) {
    member_set_add (&suspects, use[0].disk);
    array_note_mismatch (a, u, -1, &suspects, sectors);
  }
  return 0;
}

/* One round of resync or check over units [u, u+n): with sync, the
 * first usable copy of each unit is written over the others; with
 * check, every usable copy is read and compared page by page
 * (check_page).  *done counts the units not in holes. */
static int
copies_round (struct raid_array *a, uint64_t u, uint64_t n, bool sync,
              bool repair, uint64_t *mismatches, uint64_t *done)
{
  const struct raid_geometry *g = &a->geo;
  struct place places[RAID_MAX_MEMBERS], use[RAID_MAX_MEMBERS];
  struct member_set none = { { 0 } };
  struct members_view v;
  struct io_batch reads, writes;
  uint8_t *buf, *bufs[RAID_MAX_MEMBERS], *ubuf[RAID_MAX_MEMBERS];
  bool *in_holes = calloc (n, sizeof *in_holes);
  uint64_t i;
  unsigned c, src, np, nuse;
  int r = -1;

  buf = parity_buffers_alloc (g->copies, n * g->unit_bytes, a->direct, 0,
                              bufs);
  if (!buf || !in_holes) {
    parity_buffers_free (buf);
    free (in_holes);
    errno = ENOMEM;
    return -1;
  }
  io_batch_init (&reads);
  io_batch_init (&writes);
  array_lock_units (a, u, u + n - 1, true);
  array_view (a, &v);
  /* The write-mostly copies must hold what the others hold. */
  behind_wait_range (a, u * g->unit_bytes, n * g->unit_bytes);
  for (i = 0; i < n; i++) {
    uint64_t len = unit_len (a, u + i), off = i * g->unit_bytes;

    np = geometry_unit_places (g, u + i, places);
    in_holes[i] = unit_in_holes (a, places, np, len);
    if (in_holes[i])
      continue;
    ++*done;
    src = first_usable (a, &v, places, np, len);
    for (c = 0; c < np; c++)
      if ((c == src || !sync) &&
          copies_place_usable (a, &v, &none, &places[c], len) &&
          io_batch_add (&reads, IO_READ, places[c].disk,
                        places[c].member_unit * g->unit_bytes, len,
                        bufs[c] + off))
        goto out;
  }
  if (array_run (a, &reads)) {
    errno = EIO;
    goto out;
  }
  for (i = 0; i < n; i++) {
    uint64_t len = unit_len (a, u + i), off = i * g->unit_bytes, p;

    if (in_holes[i])
      continue;
    np = geometry_unit_places (g, u + i, places);
    src = first_usable (a, &v, places, np, len);
    /* The source first: the others are compared with it or copied
     * from it. */
    nuse = 0;
    if (src < np) {
      use[nuse] = places[src];
      ubuf[nuse++] = bufs[src];
    }
    for (c = 0; c < np; c++)
      if (c != src && copies_place_usable (a, &v, &none, &places[c], len)) {
        use[nuse] = places[c];
        ubuf[nuse++] = bufs[c];
      }
    for (c = 1; sync && c < nuse; c++)
      if (view_add_write (&v, &writes, IO_WRITE, use[c].disk,
                          use[c].member_unit * g->unit_bytes, len,
                          ubuf[0] + off))
        goto out;
    for (p = 0; !sync && p < len; p += 4096)
      if (check_page (a, &v, u + i, use, ubuf, nuse, off + p, p,
                      len - p < 4096 ? len - p : 4096, repair, mismatches,
                      &writes))
        goto out;
  }
  array_run (a, &writes);
  r = array_settle_writes (a, &writes);
 out:
  array_unlock_units (a, u, u + n - 1);
  io_batch_free (&reads);
  io_batch_free (&writes);
  parity_buffers_free (buf);
  free (in_holes);
  return r;
}

/* Units per resync or check round: WINDOW_BYTES of all their copies, at
 * least one. */
static uint64_t
window_units (const struct raid_array *a)
{
  uint64_t w = WINDOW_BYTES / a->geo.unit_bytes / a->geo.copies;
  return w ? w : 1;
}

/* The sync op: copy the first usable copy of each unit over the others,
 * a window of units at a time. */
int
copies_sync (struct raid_array *a, uint64_t first, uint64_t n,
             uint64_t *done)
{
  uint64_t u, w, ignored = 0;

  *done = 0;
  for (u = first; u < first + n; u += w) {
    w = first + n - u < window_units (a) ? first + n - u : window_units (a);
    if (copies_round (a, u, w, true, false, &ignored, done))
      return -1;
  }
  return 0;
}

/* The check op: compare every usable copy with the first (and with
 * repair, rewrite those that differ), a window at a time. */
int
copies_check (struct raid_array *a, uint64_t first, uint64_t n, bool repair,
              uint64_t *mismatches)
{
  uint64_t u, w, examined = 0;

  for (u = first; u < first + n; u += w) {
    w = first + n - u < window_units (a) ? first + n - u : window_units (a);
    if (copies_round (a, u, w, false, repair, mismatches, &examined))
      return -1;
  }
  return 0;
}
