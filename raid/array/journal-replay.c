/* nbdraid: replaying md's write journal (md's raid5-cache.c
 * r5c_recovery_flush_log and r5l_recovery_verify_data_checksum_for_mb). */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal-replay.h"

/* Pages one meta block may describe: two per parity payload at most. */
#define MAX_PAGES (2 * R5L_MAX_PAYLOADS)

struct scan {
  uint32_t uuid_checksum;
  uint64_t ring_bytes;
  unsigned parity_pages;
  const struct journal_replay_ops *ops;
  struct r5l_meta m;
  uint8_t *pages; /* the block's pages, in payload order */
  uint8_t *block;
};

static uint64_t
ring_add (const struct scan *s, uint64_t pos, uint64_t bytes)
{
  pos += bytes;
  return pos >= s->ring_bytes ? pos - s->ring_bytes : pos;
}

/* Read and check the pages of the meta block at pos (decoded in s->m)
 * into s->pages.  1 if they are sound, 0 if not (why in `stopped`), -1
 * on a read error (err). */
static int
read_pages (struct scan *s, uint64_t pos, char *stopped, size_t stoplen,
            char *err, size_t errlen)
{
  uint64_t at = ring_add (s, pos, R5L_BLOCK_BYTES);
  unsigned i, j, n = 0;

  for (i = 0; i < s->m.npayloads; i++) {
    const struct r5l_payload *p = &s->m.payload[i];

    if (p->type == R5L_PAYLOAD_FLUSH)
      continue;
    /* md verifies as many parity pages as the level has parities. */
    if (p->type == R5L_PAYLOAD_PARITY && p->pages != s->parity_pages) {
      snprintf (stopped, stoplen,
                "meta block at sector %" PRIu64 " (seq %" PRIu64
                "): parity payload %u has %u pages, the array %u",
                pos / 512, s->m.seq, i, p->pages, s->parity_pages);
      return 0;
    }
    for (j = 0; j < p->pages; j++, n++) {
      uint8_t *page = s->pages + (size_t)n * R5L_BLOCK_BYTES;
      uint32_t sum;

      if (s->ops->read_block (s->ops->opaque, at, page) == -1) {
        snprintf (err, errlen, "journal: read at byte %" PRIu64 ": %s", at,
                  strerror (errno));
        return -1;
      }
      sum = r5l_page_checksum (s->uuid_checksum, page);
      if (sum != p->checksum[j]) {
        snprintf (stopped, stoplen,
                  "meta block at sector %" PRIu64 " (seq %" PRIu64
                  "): payload %u page %u checksum 0x%08x, logged 0x%08x",
                  pos / 512, s->m.seq, i, j, sum, p->checksum[j]);
        return 0;
      }
      at = ring_add (s, at, R5L_BLOCK_BYTES);
    }
  }
  return 1;
}

/* ---- rows gathered until their parity (md's cached_stripe_list) ---- */

/* A row's pages held while the log is read. */
struct row {
  uint64_t row;           /* member sector of the stripe row */
  bool parity;            /* its parity came after its data */
  unsigned ndata, cap;
  uint64_t *sector;       /* data pages' array sectors, */
  uint8_t **data;         /* and the pages, latest per sector */
  uint8_t *pq[2];
  struct row *hash_next;  /* in the table */
  struct row *prev, *next; /* in arrival order */
};

#define ROW_BUCKETS 1024
/* Rows with parity are written out early past this many pages held. */
#define HELD_PAGES_MAX 16384

struct rows {
  struct row *bucket[ROW_BUCKETS];
  struct row *first, *last;
  unsigned held; /* pages */
};

static struct row **
row_slot (struct rows *t, uint64_t row)
{
  struct row **p = &t->bucket[row % ROW_BUCKETS];

  while (*p && (*p)->row != row)
    p = &(*p)->hash_next;
  return p;
}

static void
row_free (struct rows *t, struct row *r)
{
  unsigned i;

  for (i = 0; i < r->ndata; i++)
    free (r->data[i]);
  free (r->data);
  free (r->sector);
  free (r->pq[0]);
  free (r->pq[1]);
  t->held -= r->ndata + (r->pq[0] != NULL) + (r->pq[1] != NULL);
  free (r);
}

/* Take r out of the table and the order, and free it. */
static void
row_forget (struct rows *t, struct row *r)
{
  *row_slot (t, r->row) = r->hash_next;
  if (r->prev)
    r->prev->next = r->next;
  else
    t->first = r->next;
  if (r->next)
    r->next->prev = r->prev;
  else
    t->last = r->prev;
  row_free (t, r);
}

static struct row *
row_get (struct rows *t, uint64_t row)
{
  struct row **p = row_slot (t, row), *r = *p;

  if (r)
    return r;
  if (!(r = calloc (1, sizeof *r)))
    return NULL;
  r->row = row;
  *p = r;
  r->prev = t->last;
  if (t->last)
    t->last->next = r;
  else
    t->first = r;
  t->last = r;
  return r;
}

static uint8_t *
page_copy (const uint8_t *page)
{
  uint8_t *c = malloc (R5L_BLOCK_BYTES);

  if (c)
    memcpy (c, page, R5L_BLOCK_BYTES);
  return c;
}

static int
row_add_data (struct rows *t, struct row *r, uint64_t sector,
              const uint8_t *page)
{
  uint8_t *copy = page_copy (page);
  unsigned i;

  if (!copy)
    return -1;
  for (i = 0; i < r->ndata && r->sector[i] != sector; i++)
    ;
  if (i < r->ndata) {
    free (r->data[i]);
    r->data[i] = copy;
    return 0;
  }
  if (r->ndata == r->cap) {
    unsigned cap = r->cap ? 2 * r->cap : 4;
    uint64_t *sectors = realloc (r->sector, cap * sizeof *sectors);
    uint8_t **pages = sectors ? realloc (r->data, cap * sizeof *pages) : NULL;

    if (sectors)
      r->sector = sectors;
    if (!pages) {
      free (copy);
      return -1;
    }
    r->data = pages;
    r->cap = cap;
  }
  r->sector[r->ndata] = sector;
  r->data[r->ndata++] = copy;
  t->held++;
  return 0;
}

/* Write a row's data and parity where they belong; one that has only
 * parity was written before the crash (md's
 * r5l_recovery_replay_one_stripe). */
static int
row_write (struct scan *s, const struct row *r, unsigned *stripes, char *err,
           size_t errlen)
{
  unsigned i;

  if (r->ndata == 0)
    return 0;
  for (i = 0; i < r->ndata; i++)
    if (s->ops->write_data (s->ops->opaque, r->sector[i], r->data[i], err,
                            errlen)
        == -1)
      return -1;
  for (i = 0; i < s->parity_pages; i++)
    if (s->ops->write_parity (s->ops->opaque, r->row, i, r->pq[i], err,
                              errlen)
        == -1)
      return -1;
  (*stripes)++;
  return 0;
}

/* Write out and forget every row whose parity came (md's
 * r5c_recovery_replay_stripes). */
static int
rows_write_complete (struct scan *s, struct rows *t, unsigned *stripes,
                     char *err, size_t errlen)
{
  struct row *r, *next;

  for (r = t->first; r; r = next) {
    next = r->next;
    if (!r->parity)
      continue;
    if (row_write (s, r, stripes, err, errlen) == -1)
      return -1;
    row_forget (t, r);
  }
  return 0;
}

static void
rows_free (struct rows *t)
{
  while (t->first)
    row_forget (t, t->first);
}

static int
no_memory (char *err, size_t errlen)
{
  snprintf (err, errlen, "journal replay: %s", strerror (ENOMEM));
  return -1;
}

/* Gather the block's pages by row, in the order logged (md's
 * r5c_recovery_analyze_meta_block): data after a row's parity starts
 * the row again, its earlier update written first; a flush payload
 * names rows already on the members. */
static int
gather (struct scan *s, struct rows *t, unsigned *stripes, char *err,
        size_t errlen)
{
  unsigned i, j, n = 0;

  for (i = 0; i < s->m.npayloads; i++) {
    const struct r5l_payload *p = &s->m.payload[i];
    const uint8_t *page = s->pages + (size_t)n * R5L_BLOCK_BYTES;
    struct row *r;

    if (p->type == R5L_PAYLOAD_FLUSH) {
      for (j = 0; j < p->nflush; j++) {
        r = *row_slot (t, s->m.flush[p->first_flush + j]);
        if (r)
          row_forget (t, r);
      }
      continue;
    }
    n += p->pages;
    r = row_get (t, p->type == R5L_PAYLOAD_DATA
                        ? s->ops->stripe_of (s->ops->opaque, p->location)
                        : p->location);
    if (!r)
      return no_memory (err, errlen);
    if (p->type == R5L_PAYLOAD_DATA) {
      if (r->parity) {
        if (row_write (s, r, stripes, err, errlen) == -1)
          return -1;
        row_forget (t, r);
        if (!(r = row_get (t, s->ops->stripe_of (s->ops->opaque,
                                                 p->location))))
          return no_memory (err, errlen);
      }
      if (row_add_data (t, r, p->location, page) == -1)
        return no_memory (err, errlen);
      continue;
    }
    for (j = 0; j < p->pages; j++) {
      uint8_t *copy = page_copy (page + (size_t)j * R5L_BLOCK_BYTES);

      if (!copy)
        return no_memory (err, errlen);
      t->held += r->pq[j] == NULL;
      free (r->pq[j]);
      r->pq[j] = copy;
    }
    r->parity = true;
  }
  if (t->held > HELD_PAGES_MAX)
    return rows_write_complete (s, t, stripes, err, errlen);
  return 0;
}

/* At the log's end: rows with parity are written; the data of the
 * others (md's data-only stripes) goes to keep_data, in log order. */
static int
finish (struct scan *s, struct rows *t, struct journal_replay_result *res,
        char *err, size_t errlen)
{
  struct row *r;
  unsigned i;

  if (rows_write_complete (s, t, &res->stripes, err, errlen) == -1)
    return -1;
  for (r = t->first; r; r = r->next)
    for (i = 0; i < r->ndata; i++, res->kept++)
      if (s->ops->keep_data (s->ops->opaque, r->sector[i], r->data[i], err,
                             errlen)
          == -1)
        return -1;
  return 0;
}

int
journal_replay (uint32_t uuid_checksum, uint64_t ring_bytes,
                unsigned parity_pages, uint64_t tail, uint64_t seq,
                const struct journal_replay_ops *ops,
                struct journal_replay_result *res, char *err, size_t errlen)
{
  struct scan *s = calloc (1, sizeof *s);
  struct rows *t = calloc (1, sizeof *t);
  uint64_t pos = tail, used = 0;
  char why[200];
  int r = -1, ok;

  memset (res, 0, sizeof *res);
  if (!s || !t || !(s->pages = malloc ((size_t)MAX_PAGES * R5L_BLOCK_BYTES))
      || !(s->block = malloc (R5L_BLOCK_BYTES))) {
    snprintf (err, errlen, "journal replay: %s", strerror (ENOMEM));
    goto out;
  }
  s->uuid_checksum = uuid_checksum;
  s->ring_bytes = ring_bytes;
  s->parity_pages = parity_pages;
  s->ops = ops;
  for (;;) {
    if (ops->read_block (ops->opaque, pos, s->block) == -1) {
      snprintf (err, errlen, "journal: read at byte %" PRIu64 ": %s", pos,
                strerror (errno));
      goto out;
    }
    if (r5l_meta_decode (s->block, uuid_checksum, &s->m, why, sizeof why)
        == -1) {
      snprintf (res->stopped, sizeof res->stopped,
                "meta block at sector %" PRIu64 ": %s", pos / 512, why);
      break;
    }
    if (s->m.seq != seq || s->m.position != pos / 512) {
      snprintf (res->stopped, sizeof res->stopped,
                "meta block at sector %" PRIu64 ": seq %" PRIu64
                " position %" PRIu64 ", not the log's next (seq %" PRIu64 ")",
                pos / 512, s->m.seq, s->m.position, seq);
      break;
    }
    used += (1 + r5l_meta_pages (&s->m)) * R5L_BLOCK_BYTES;
    if (used > ring_bytes) {
      snprintf (res->stopped, sizeof res->stopped,
                "meta block at sector %" PRIu64 ": the log would "
                "overrun its own start",
                pos / 512);
      break;
    }
    ok = read_pages (s, pos, why, sizeof why, err, errlen);
    if (ok == -1)
      goto out;
    /* A block whose pages fail their checksums is dropped and the log
     * read on, as md does (r5c_recovery_analyze_meta_block's -EAGAIN:
     * its io_units may land out of order). */
    if (ok == 0 && res->damaged++ == 0)
      snprintf (res->damage, sizeof res->damage, "%s", why);
    /* The tail's own block too: md moves the tail to the oldest block
     * whose stripes may not all be on the members. */
    if (ok == 1 && gather (s, t, &res->stripes, err, errlen) == -1)
      goto out;
    res->blocks += pos != tail;
    pos = ring_add (s, pos, (1 + r5l_meta_pages (&s->m)) * R5L_BLOCK_BYTES);
    seq++;
  }
  res->end_pos = pos;
  res->end_seq = seq;
  if (finish (s, t, res, err, errlen) == -1)
    goto out;
  r = 0;
out:
  if (t) {
    rows_free (t);
    free (t);
  }
  if (s) {
    free (s->pages);
    free (s->block);
  }
  free (s);
  return r;
}
