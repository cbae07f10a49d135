/* nbdraid: replaying md's write journal (md's raid5-cache.c
 * r5c_recovery_flush_log and r5l_recovery_verify_data_checksum_for_mb,
 * for write-through logs). */
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
 * into s->pages.  1 if they are sound, 0 if not (why in stopped), -1
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

/* In a write-through log every data page comes with its stripe's
 * parity in the same meta block (md's r5l_log_stripe); data alone is
 * md's write-back cache, which is not replayed here. */
static int
check_parity_present (const struct scan *s, uint64_t pos, char *err,
                      size_t errlen)
{
  unsigned i, j;

  for (i = 0; i < s->m.npayloads; i++) {
    const struct r5l_payload *p = &s->m.payload[i];
    uint64_t stripe;
    bool found = false;

    if (p->type != R5L_PAYLOAD_DATA)
      continue;
    stripe = s->ops->stripe_of (s->ops->opaque, p->location);
    for (j = 0; j < s->m.npayloads && !found; j++)
      found = s->m.payload[j].type == R5L_PAYLOAD_PARITY
              && s->m.payload[j].location == stripe;
    if (!found) {
      snprintf (err, errlen,
                "journal: meta block at sector %" PRIu64 " (seq %" PRIu64
                ") holds data for stripe sector %" PRIu64
                " without its parity (md's write-back mode, which is not "
                "supported)",
                pos / 512, s->m.seq, stripe);
      return -1;
    }
  }
  return 0;
}

/* Write the block's pages where they belong, in the order logged. */
static int
apply (struct scan *s, unsigned *stripes, char *err, size_t errlen)
{
  unsigned i, j, n = 0;

  for (i = 0; i < s->m.npayloads; i++) {
    const struct r5l_payload *p = &s->m.payload[i];

    if (p->type == R5L_PAYLOAD_FLUSH)
      continue;
    for (j = 0; j < p->pages; j++, n++) {
      const uint8_t *page = s->pages + (size_t)n * R5L_BLOCK_BYTES;
      int r = p->type == R5L_PAYLOAD_DATA
                  ? s->ops->write_data (s->ops->opaque, p->location, page, err,
                                        errlen)
                  : s->ops->write_parity (s->ops->opaque, p->location, j, page,
                                          err, errlen);
      if (r == -1)
        return -1;
    }
    *stripes += p->type == R5L_PAYLOAD_PARITY;
  }
  return 0;
}

int
journal_replay (uint32_t uuid_checksum, uint64_t ring_bytes,
                unsigned parity_pages, uint64_t tail, uint64_t seq,
                const struct journal_replay_ops *ops,
                struct journal_replay_result *res, char *err, size_t errlen)
{
  struct scan *s = calloc (1, sizeof *s);
  uint64_t pos = tail, used = 0;
  char why[200];
  int r = -1, ok;

  memset (res, 0, sizeof *res);
  if (!s || !(s->pages = malloc ((size_t)MAX_PAGES * R5L_BLOCK_BYTES))
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
    ok = read_pages (s, pos, res->stopped, sizeof res->stopped, err, errlen);
    if (ok == -1)
      goto out;
    if (ok == 0)
      break;
    /* The tail's own block is on the members already: md moves the
     * tail only to a block whose stripes are written and flushed (its
     * reclaim), or to a new empty one.  md rewrites it all the same;
     * with a slow member that costs a start-up a write per page. */
    if (res->skipped == 0)
      res->skipped = 1;
    else if (check_parity_present (s, pos, err, errlen) == -1
             || apply (s, &res->stripes, err, errlen) == -1)
      goto out;
    else
      res->blocks++;
    pos = ring_add (s, pos, (1 + r5l_meta_pages (&s->m)) * R5L_BLOCK_BYTES);
    seq++;
  }
  res->end_pos = pos;
  res->end_seq = seq;
  r = 0;
out:
  if (s) {
    free (s->pages);
    free (s->block);
  }
  free (s);
  return r;
}
