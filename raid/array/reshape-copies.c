/* nbdraid: a RAID10's member I/O while it reshapes (md's raid10
 * reshape, near and offset layouts): every chunk of either geometry is
 * read from the first of its copies that is not gone and reads, and
 * written to every copy not gone.  No column, no parity: a RAID10's
 * write needs nothing read first, so the job's windows and the clients'
 * writes are the same loop.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

/* The places of the chunk of g holding array byte addr; how many. */
static unsigned
places_of (const struct raid_geometry *g, uint64_t addr, struct place *places)
{
  return geometry_unit_places (g, addr / g->chunk_bytes, places);
}

int
reshape_copies_read (struct raid_array *a, bool new_geo,
                     const struct member_set *gone, uint8_t *buf,
                     uint64_t count, uint64_t offset)
{
  const struct raid_geometry *g = new_geo ? &a->geo : &a->reshape.old;
  const uint64_t C = g->chunk_bytes;
  struct place places[RAID_MAX_MEMBERS];
  struct io_batch b;
  int r = 0;

  io_batch_init (&b);
  while (count && r == 0) {
    uint64_t within = offset % C, len = C - within < count ? C - within : count;
    unsigned n = places_of (g, offset, places), i;

    /* A copy that fails to read is passed over for the next: the
     * reshape writes every copy anew, clients' writes do too. */
    r = -1;
    for (i = 0; i < n && r == -1; i++) {
      if (member_set_has (gone, places[i].disk))
        continue;
      io_batch_reset (&b);
      if (reshape_add_op (a, &b, IO_READ, places[i].disk, new_geo,
                          places[i].member_unit * C + within, len, buf)
          == -1)
        break;
      r = reshape_run (a, &b);
    }
    if (r == -1)
      errno = EIO;
    buf += len;
    offset += len;
    count -= len;
  }
  io_batch_free (&b);
  return r;
}

int
reshape_copies_write (struct raid_array *a, bool new_geo,
                      const struct member_set *gone, const uint8_t *data,
                      uint64_t count, uint64_t offset)
{
  const struct raid_geometry *g = new_geo ? &a->geo : &a->reshape.old;
  const uint64_t C = g->chunk_bytes;
  struct place places[RAID_MAX_MEMBERS];
  uint8_t *zeros = data ? NULL : calloc (1, C);
  struct io_batch b;
  int r = data || zeros ? 0 : -1;

  io_batch_init (&b);
  while (count && r == 0) {
    uint64_t within = offset % C, len = C - within < count ? C - within : count;
    unsigned n = places_of (g, offset, places), i;

    for (i = 0; i < n && r == 0; i++)
      if (!member_set_has (gone, places[i].disk))
        r = reshape_add_op (a, &b, IO_WRITE, places[i].disk, new_geo,
                            places[i].member_unit * C + within, len,
                            data ? (void *)data : zeros);
    if (data)
      data += len;
    offset += len;
    count -= len;
  }
  if (r == 0)
    r = reshape_run_writes (a, &b);
  io_batch_free (&b);
  free (zeros);
  return r;
}
