/* nbdraid: nbdraid grow --size, mdadm's --grow --size: once every
 * member is bigger (replaced by bigger disks, or its file or block
 * device grown), the array uses more of each.  md's update_size() and
 * the levels' resize(): the superblocks get the new size, the bitmap
 * covers it (its chunk doubled if the bits would not fit), and the new
 * space is resynced from the old end (resync_offset), as md does
 * without --assume-clean.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "array.h"
#include "config-file.h"
#include "refuse.h"

/* What the array must be for a grow: writable, whole, idle, and of a
 * level and layout md can resize. */
static int
check_array (struct raid_array *a, char *err, size_t errlen)
{
  unsigned m;

  if (admin_refuse_unwritable (a, err, errlen) == -1)
    return -1;
  for (m = 0; m < a->geo.members; m++)
    if (slot_state (&a->slots[m]) != SLOT_ACTIVE)
      return array_refuse (err, errlen,
                           "array %s is degraded (member %u is %s): "
                           "grow needs every member active",
                           a->name, m,
                           slot_state (&a->slots[m]) == SLOT_RECOVERING
                               ? "recovering"
                               : "not active");
  if (admin_refuse_busy (a, "grow it", err, errlen) == -1)
    return -1;
  /* md: raid0 has no resize; raid10_resize refuses far layouts. */
  if (a->geo.lvl->zoned)
    return array_refuse (err, errlen,
                         "array %s is RAID0: md cannot change the "
                         "size of a RAID0",
                         a->name);
  if (a->geo.far > 1 && !a->geo.far_offset)
    return array_refuse (err, errlen,
                         "array %s is RAID10 with a far layout: md "
                         "cannot change its size",
                         a->name);
  /* An array of nested ones grows once they have, group by group. */
  return admin_refuse_journal (a, "growing it", err, errlen);
}

/* Read every device's size again; the most each role's data area now
 * holds goes into *avail, the role that holds least into *least.  *nbd
 * says whether some member's size is the one it had at connect. */
static int
reread_sizes (struct raid_array *a, uint64_t *avail, unsigned *least,
              bool *nbd, char *err, size_t errlen)
{
  unsigned i;
  bool fixed;

  *avail = UINT64_MAX;
  *nbd = false;
  for (i = 0; i < a->geo.members + a->nspares; i++) {
    struct raid_slot *s = array_slot (a, i);
    uint64_t size;

    if (!s->io)
      continue;
    if (member_refresh_size (s->io, &fixed, err, errlen) == -1)
      return -1;
    *nbd |= fixed && i < a->geo.members;
    if (i >= a->geo.members)
      continue;
    /* md v1.0 keeps its superblock at the end: it would have to move. */
    if (s->sb.super_offset_sectors * 512 > s->data_offset_bytes)
      return array_refuse (err, errlen,
                           "member %u (%s) has its superblock at "
                           "its end (md v1.0): growing it is not supported",
                           i, s->path);
    size = __atomic_load_n (&s->io->size_bytes, __ATOMIC_ACQUIRE);
    size = size > s->data_offset_bytes ? size - s->data_offset_bytes : 0;
    if (size < *avail) {
      *avail = size;
      *least = i;
    }
  }
  return 0;
}

/* The bytes of sync space in use (geometry_sync_bytes without its
 * rounding up to a whole unit): what was in sync before the grow. */
static uint64_t
exact_sync_bytes (const struct raid_geometry *g)
{
  return g->parity_members ? g->member_bytes : g->array_bytes;
}

/* Pick the new size each member gives: max, or SIZE; refuse a size no
 * bigger than now, or bigger than the smallest member allows. */
static int
new_member_bytes (struct raid_array *a, const char *size, uint64_t *out,
                  char *err, size_t errlen)
{
  uint64_t round = a->geo.lvl->has_chunk ? a->geo.chunk_bytes
    : UNCHUNKED_ROUND_BYTES, avail, want;
  unsigned least = 0;
  bool max = strcmp (size, "max") == 0, nbd;

  if (!max && raid_parse_size (size, &want) == -1)
    return array_refuse (
        err, errlen,
        "'%s' is not a size (give max, or the bytes "
        "each member gives the array, with an optional K, M, G "
        "or T)",
        size);
  if (reread_sizes (a, &avail, &least, &nbd, err, errlen) == -1)
    return -1;
  if (avail < a->geo.member_bytes)
    return array_refuse (err, errlen,
                         "member %u (%s) is smaller than array %s "
                         "uses (%" PRIu64 " bytes of data area, %" PRIu64 " in "
                         "use): it shrank",
                         least, a->slots[least].path, a->name, avail,
                         a->geo.member_bytes);
  if (max)
    want = avail;
  else if (want > avail)
    return array_refuse (err, errlen,
                         "size %s is more than member %u (%s) "
                         "allows: %" PRIu64 " bytes after its data offset",
                         size, least, a->slots[least].path, avail);
  want = want / round * round;
  if (want < a->geo.member_bytes)
    return array_refuse (err, errlen,
                         "shrinking is not supported (array %s uses "
                         "%" PRIu64 " bytes of each member; %s gives %" PRIu64
                         ")",
                         a->name, a->geo.member_bytes, size, want);
  if (want == a->geo.member_bytes)
    return array_refuse (
        err, errlen,
        "array %s already uses %" PRIu64 " bytes "
        "of each member, all that member %u (%s) allows%s",
        a->name, a->geo.member_bytes, least, a->slots[least].path,
        nbd ? " (an NBD member's size is the one its export had "
              "when the server connected: restart the server to see "
              "an export that grew)"
            : "");
  *out = want;
  return 0;
}

/* Write every superblock with what changed in them (events+1). */
static int
write_superblocks (struct raid_array *a, bool size, char *err,
                   size_t errlen)
{
  unsigned i;
  int r;

  pthread_mutex_lock (&a->sb_lock);
  for (i = 0; i < a->geo.members + a->nspares; i++) {
    struct raid_slot *s = array_slot (a, i);
    if (size)
      s->sb.size_sectors = a->geo.member_bytes / 512;
    else if (s->io && s->io->size_bytes > s->data_offset_bytes)
      s->sb.data_size_sectors = (s->io->size_bytes - s->data_offset_bytes)
        / 512;
  }
  r = array_write_superblocks_locked (a);
  pthread_mutex_unlock (&a->sb_lock);
  return r == -1 ? admin_refuse_write_failed (a, err, errlen) : 0;
}

/* With writes held and the array quiesced: the superblocks, the
 * geometry, the bitmap and resync_front say the new size, in an order
 * a crash anywhere leaves usable:
 * - each device's data size first, a change harmless at the old size,
 *   so no device one event behind the others (a crash between two
 *   superblock writes) says its data area is smaller than the array;
 * - the bitmap next: a crash before the sizes leaves the old size with
 *   a bitmap whose sync_size is not the array's, not trusted (a full
 *   resync if the array was dirty), never a new size whose new space
 *   the bitmap does not mark;
 * - the size last, with resync_offset at the old end.
 * A device a write fails on is failed as anywhere else. */
static int
apply (struct raid_array *a, const struct raid_geometry *g, char *err,
       size_t errlen)
{
  /* The last unit of a mirror may have been partly past the end: it
   * is resynced again, whole, and its bit (of its first byte) set. */
  uint64_t front = exact_sync_bytes (&a->geo) / a->geo.unit_bytes;
  struct raid_geometry old = a->geo;

  if (write_superblocks (a, false, err, errlen) == -1)
    return -1;
  a->geo = *g;
  if (bitmap_resize (a, front * a->geo.unit_bytes, err, errlen) == -1) {
    a->geo = old;
    return -1;
  }
  if (__atomic_load_n (&a->resync_front, __ATOMIC_ACQUIRE) > front)
    __atomic_store_n (&a->resync_front, front, __ATOMIC_RELEASE);
  bitmap_write (a);
  return write_superblocks (a, true, err, errlen);
}

/* A spare the array has outgrown can take no role now: say so. */
static void
warn_small_spares (struct raid_array *a)
{
  unsigned i;

  for (i = 0; i < a->nspares; i++) {
    const struct raid_slot *s = &a->spares[i];
    if (s->io && slot_state (s) == SLOT_ACTIVE &&
        s->io->size_bytes < s->data_offset_bytes + a->geo.member_bytes)
      array_log (a, RAID_LOG_WARNING, "array %s: spare %s is too small "
                 "for it now (%" PRIu64 " bytes, it needs %" PRIu64 "): "
                 "it can take no role", a->name, s->path, s->io->size_bytes,
                 s->data_offset_bytes + a->geo.member_bytes);
  }
}

int
raid_admin_grow (struct raid_array *a, const char *size, char *done,
                 size_t donelen, char *err, size_t errlen)
{
  struct raid_geometry g;
  uint64_t member_bytes, old_bytes = a->geo.array_bytes;
  int r;

  pthread_mutex_lock (&a->sb_lock);
  r = check_array (a, err, errlen);
  pthread_mutex_unlock (&a->sb_lock);
  if (r == -1 || new_member_bytes (a, size, &member_bytes, err, errlen) == -1)
    return -1;
  g = a->geo;
  g.member_bytes = member_bytes;
  if (geometry_init (&g, err, errlen) == -1)
    return -1;
  if (a->bitmap.present &&
      bitmap_resize_chunk (a, geometry_sync_bytes (&g)) == 0)
    return array_refuse (err, errlen,
                         "array %s: the bitmap cannot cover %" PRIu64
                         " bytes per member in the space before the data",
                         a->name, member_bytes);
  array_hold_writes (a);
  array_quiesce (a);
  r = apply (a, &g, err, errlen);
  array_unquiesce (a);
  array_release_writes (a);
  if (r == -1)
    return -1;
  warn_small_spares (a);
  array_log (a, RAID_LOG_INFO, "array %s: grown from %" PRIu64 " to %"
             PRIu64 " bytes (%" PRIu64 " bytes of each member); the new "
             "space is resynced", a->name, old_bytes, a->geo.array_bytes,
             a->geo.member_bytes);
  snprintf (done, donelen, "array %s grows from %" PRIu64 " to %" PRIu64
            " bytes (%" PRIu64 " bytes of each member); resyncing the new "
            "space", a->name, old_bytes, a->geo.array_bytes,
            a->geo.member_bytes);
  return 0;
}
