/* nbdraid: one column of a parity stripe.
 *
 * A column is the byte range [lo, hi) of every chunk of one stripe:
 * the unit that parity is computed over.  Its blocks are numbered as
 * the parity code numbers them (stripe_map.block_disk): data in Q
 * order, then P, then Q.  Reads, writes and reconstruction of degraded
 * stripes, read-error repair and resync all work on columns.
 */
#ifndef NBDRAID_STRIPE_COLUMN_H
#define NBDRAID_STRIPE_COLUMN_H

#include "array.h"
#include "parity.h"
#include "stripe-batch.h"

/* What the parity family keeps per array (a->level_state;
 * parity-state.c). */
/* What a parity write's journal entries are for. */
enum parity_log {
  PARITY_LOG_CLIENT,  /* a client's write */
  PARITY_LOG_DESTAGE, /* the write-back cache's, which may use the room
                       * the log keeps for it */
  PARITY_LOG_NONE,    /* none: the journal failed */
};

struct parity_state {
  struct parity_code code;
  struct stripe_batches batches;        /* writes gathered per stripe */
  const uint8_t *zeros;                 /* unit_bytes of zeros, read-only */
};

static inline struct parity_state *
parity_state (const struct raid_array *a)
{
  return a->level_state;
}

int parity_setup (struct raid_array *a, char *err, size_t errlen);
void parity_teardown (struct raid_array *a);

/* Columns start and end on this boundary (O_DIRECT members). */
#define COLUMN_ALIGN 4096ULL

static inline uint64_t
align_down (uint64_t x)
{
  return x / COLUMN_ALIGN * COLUMN_ALIGN;
}

static inline uint64_t
align_up (uint64_t x)
{
  return (x + COLUMN_ALIGN - 1) / COLUMN_ALIGN * COLUMN_ALIGN;
}

static inline uint64_t
min64 (uint64_t a, uint64_t b)
{
  return a < b ? a : b;
}

static inline uint64_t
max64 (uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

struct column {
  uint64_t stripe;
  uint64_t lo, hi;              /* bytes within each chunk, 4K-aligned */
  struct stripe_map map;
  uint8_t *block[RAID_MAX_MEMBERS + 2]; /* NULL: no buffer */
  uint8_t *mem;
  /* Start the buffers this far past 32-byte alignment (column_alloc):
   * where the client data they are computed with starts. */
  size_t skew;
};

void column_init (struct column *c, const struct raid_array *a,
                  uint64_t stripe, uint64_t lo, uint64_t hi);
/* Buffers for the blocks with want[b] set.  Returns 0 or -1 (ENOMEM). */
int column_alloc (struct column *c, const struct raid_array *a,
                  const bool *want);
void column_free (struct column *c);

static inline unsigned
column_blocks (const struct raid_array *a)
{
  return a->geo.data_members + a->geo.parity_members;
}

/* Member offset (in the data area) of the column in every chunk. */
static inline uint64_t
column_offset (const struct raid_array *a, const struct column *c)
{
  return c->stripe * a->geo.chunk_bytes + c->lo;
}

/* Add a read of every buffered block whose member is not in gone. */
int column_add_reads (const struct raid_array *a, const struct column *c,
                      const struct member_set *gone, struct io_batch *b);

/* Every block buffered and on a member in gone gets its contents back
 * from the others: data through the parity code, then P and Q by
 * encoding.  Returns 0, or -1 (EIO) if too much is gone. */
int column_recover (struct raid_array *a, struct column *c,
                    const struct member_set *gone);

/* Recompute P (and Q) from the data blocks. */
void column_encode (struct raid_array *a, struct column *c);

/* Do stripe s's chunks lie in holes on every member, all in use?  Such
 * a stripe reads as zeros everywhere, so its parity is right as it is:
 * resync and check pass it by, and sparse members stay sparse
 * (io-parity.c). */
bool stripe_in_holes (struct raid_array *a, uint64_t s);

/* Check and repair of stripes (scrub-parity.c). */
int parity_check (struct raid_array *a, uint64_t first, uint64_t n,
                  bool repair, uint64_t *mismatches);

/* Write the pieces, in stripes first..last whose locks the caller
 * holds, through the level's write path, logged in the journal as a
 * client's write, as a destage of the write-back cache, or not at all
 * (the journal failed).  0, or -1 with errno (io-parity.c). */
struct stripe_piece;
int parity_write_locked (struct raid_array *a, const struct stripe_piece *piece,
                         unsigned npieces, uint64_t first, uint64_t last,
                         enum parity_log log);

/* journal-mode = write-back (parity-write-back.c): a client write, and
 * the destage op. */
int parity_write_back (struct raid_array *a, const uint8_t *buf,
                       uint64_t count, uint64_t offset);
int parity_destage (struct raid_array *a, uint64_t stripe);

/* The parity family's read (read-parity.c) and reconstruct
 * (rebuild-parity.c). */
int parity_read (struct raid_array *a, uint8_t *buf, uint64_t count,
                 uint64_t offset);
int parity_reconstruct (struct raid_array *a, unsigned m, uint64_t off,
                        uint64_t len, const struct member_set *gone,
                        uint8_t *out, struct scratch *scratch);
bool parity_unwritten (struct raid_array *a, unsigned m, uint64_t off,
                       uint64_t len, const struct member_set *gone);

#endif
