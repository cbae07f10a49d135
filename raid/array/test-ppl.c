/* nbdraid: replaying the partial parity log (ppl.c) at assembly, from
 * a log written here by hand: an array whose parity on one row was
 * spoiled, marked dirty, with a log holding one sound entry for that
 * row, one whose partial parity fails its checksum and one that names
 * another member's stripe.  The sound one puts the parity back (as the
 * XOR of the row's data, read from the member files); the other two
 * are skipped, so the array stays dirty for its resync; the log is
 * emptied.
 */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "le.h"
#include "ppl-format.h"
#include "superblock.h"
#include "test-array.h"
#include "test-report.h"

#define MEMBERS 4
#define CHUNK 16384
#define BLOCK 4096
#define AREA (MD_SB_OFFSET_BYTES + PPL_OFFSET_SECTORS * 512)

static int fds[MEMBERS];

static void
member_io (unsigned m, void *buf, uint64_t off, bool write)
{
  ssize_t r = write ? pwrite (fds[m], buf, BLOCK, (off_t)off)
                    : pread (fds[m], buf, BLOCK, (off_t)off);

  if (r != BLOCK)
    fail ("member %u: %s at %llu", m, write ? "pwrite" : "pread",
          (unsigned long long)off);
}

/* Mark every superblock dirty (resync_offset 0), as a crash leaves it. */
static void
mark_dirty (void)
{
  uint8_t sb[MD_SB_BLOCK_BYTES];
  unsigned m;

  for (m = 0; m < MEMBERS; m++) {
    if (pread (fds[m], sb, sizeof sb, MD_SB_OFFSET_BYTES) != sizeof sb)
      fail ("member %u: reading the superblock", m);
    le64_put (sb + 208, 0);
    le32_put (sb + 216, md_sb_checksum (sb));
    if (pwrite (fds[m], sb, sizeof sb, MD_SB_OFFSET_BYTES) != sizeof sb)
      fail ("member %u: writing the superblock", m);
  }
}

int
main (void)
{
  char dir[] = "/tmp/nbdraid-test-ppl.XXXXXX", path[600], cmd[600], err[1024];
  static const struct raid_create_options co = { .assume_clean = true };
  struct raid_options ao = { 0 };
  struct raid_config cfg;
  struct raid_array *a;
  struct stripe_map map;
  struct ppl_header h = { 0 };
  uint8_t *data, block[PPL_HEADER_BYTES], pp[BLOCK], row[BLOCK], x[BLOCK];
  uint8_t uuid[16];
  uint64_t size, data_off, stripe = 1, i;
  unsigned m, d, p;

  if (!mkdtemp (dir)) {
    perror ("mkdtemp");
    return 1;
  }
  a = test_array (dir, "ppl",
                  "level = 5\nchunk = 16K\nheartbeat = off\n"
                  "consistency-policy = ppl\n",
                  MEMBERS, 3 * 1024 * 1024, &co, &cfg, err, sizeof err);
  if (!a || raid_start (a) == -1) {
    fail ("assembling: %s", err);
    return 1;
  }
  size = raid_size (a);
  data = malloc (size);
  for (i = 0; i < size; i++)
    data[i] = (uint8_t)(i * 2654435761U >> 13);
  if (raid_write (a, data, size, 0, false) == -1 || raid_flush (a) == -1)
    fail ("writing the array");
  data_off = a->slots[0].data_offset_bytes;
  memcpy (uuid, a->slots[0].sb.set_uuid, 16);
  geometry_stripe_map (&a->geo, stripe, &map);
  p = map.p_disk;
  raid_close (a);
  for (m = 0; m < MEMBERS; m++) {
    snprintf (path, sizeof path, "%s/ppl-%u.img", dir, m);
    fds[m] = open (path, O_RDWR);
  }

  /* Stripe 1's first row, chunk 0 written: the partial parity is
   * chunks 1 and 2 of the row; its parity is spoiled. */
  memset (pp, 0, sizeof pp);
  for (d = 1; d < 3; d++) {
    member_io (map.data_disk[d], row, data_off + stripe * CHUNK, false);
    for (i = 0; i < BLOCK; i++)
      pp[i] ^= row[i];
  }
  memset (row, 0x5a, sizeof row);
  member_io (p, row, data_off + stripe * CHUNK, true);

  h.signature = ppl_signature (uuid);
  h.generation = 7;
  h.entries_count = 3;
  for (d = 0; d < 3; d++)
    h.entries[d] = (struct ppl_entry){
      .data_sector = stripe * 3 * CHUNK / 512,
      .pp_size = BLOCK,
      .data_size = BLOCK,
      .parity_disk = p,
      .checksum = ppl_crc (pp, BLOCK),
    };
  h.entries[1].checksum ^= 1;                   /* torn */
  h.entries[2].parity_disk = (p + 1) % MEMBERS; /* not its stripe */
  ppl_header_encode (&h, block);
  member_io (p, block, AREA, true);
  for (d = 0; d < 3; d++)
    member_io (p, pp, AREA + PPL_HEADER_BYTES + d * BLOCK, true);
  mark_dirty ();

  a = raid_assemble (&cfg, &ao, err, sizeof err);
  if (!a)
    fail ("assembling the dirty array: %s", err);
  else {
    /* The other members' latest logs, of the writes above, replay too. */
    if (a->ppl.replayed < 1 || a->ppl.skipped != 2)
      fail ("replayed %u and skipped %u entries, not 1 or more and 2",
            a->ppl.replayed, a->ppl.skipped);
    if (a->in_sync)
      fail ("entries were skipped, yet the array is marked clean");
    raid_close (a);
  }
  /* The row's parity is the XOR of its data again. */
  memset (x, 0, sizeof x);
  for (d = 0; d < 3; d++) {
    member_io (map.data_disk[d], row, data_off + stripe * CHUNK, false);
    for (i = 0; i < BLOCK; i++)
      x[i] ^= row[i];
  }
  member_io (p, row, data_off + stripe * CHUNK, false);
  if (memcmp (row, x, BLOCK) != 0)
    fail ("the replay did not put the row's parity back");
  /* And the log is empty. */
  member_io (p, block, AREA, false);
  if (ppl_header_decode (block, ppl_signature (uuid), &h, err, sizeof err) == -1
      || h.entries_count != 0)
    fail ("the log was not emptied after the replay");

  for (m = 0; m < MEMBERS; m++)
    close (fds[m]);
  raid_config_free (&cfg);
  free (data);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "warning: could not remove %s\n", dir);
  if (failures)
    return 1;
  printf ("ok: one sound entry replayed, a torn one and a stray one "
          "skipped, the log emptied\n");
  return 0;
}
