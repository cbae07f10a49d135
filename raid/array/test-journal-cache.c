/* nbdraid: test the write-back cache's keeping (journal-cache.c)
 * against a model: an array image in memory that every put also
 * writes.  Random pages put over a few stripes read back through the
 * overlay (aligned or not) as the model has them; a stripe's runs are
 * its cached pages, neighbours joined, in offset order; the oldest
 * stripe is the one whose first page was logged first, whatever order
 * the puts came in; dropping stripes empties the cache and its byte
 * count. */
#include <config.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal-cache.h"
#include "test-report.h"

#define PAGE 4096
#define STRIPE (4 * 16 * PAGE) /* 4 data chunks of 64K */
#define STRIPES 8

static uint8_t model[STRIPES * STRIPE];
static bool cached[STRIPES * STRIPE / PAGE];

static void
put (struct journal_cache *c, uint64_t page, uint8_t tag, uint64_t seq)
{
  uint8_t buf[PAGE];

  memset (buf, tag, sizeof buf);
  buf[0] = (uint8_t)page;
  if (journal_cache_put (c, buf, PAGE, page * PAGE, seq * 4096, seq) == -1)
    fail ("put page %llu", (unsigned long long)page);
  memcpy (model + page * PAGE, buf, PAGE);
  cached[page] = true;
}

/* Through the overlay over a background of 0xee, [off, off+len) must
 * read as the model where cached and 0xee elsewhere. */
static void
check_overlay (struct journal_cache *c, uint64_t off, uint64_t len)
{
  uint8_t *buf = malloc (len);
  uint64_t i;

  memset (buf, 0xee, len);
  journal_cache_overlay (c, buf, len, off);
  for (i = 0; i < len; i++) {
    uint64_t at = off + i;
    uint8_t want = cached[at / PAGE] ? model[at] : 0xee;
    if (buf[i] != want) {
      fail ("overlay of %llu+%llu: byte %llu is 0x%02x, want 0x%02x",
            (unsigned long long)off, (unsigned long long)len,
            (unsigned long long)at, buf[i], want);
      break;
    }
  }
  free (buf);
}

static void
check_runs (struct journal_cache *c, uint64_t stripe)
{
  struct cache_run *runs;
  uint64_t page = stripe * STRIPE / PAGE, end = page + STRIPE / PAGE;
  unsigned n, k = 0;

  if (journal_cache_runs (c, stripe, &runs, &n) == -1) {
    fail ("runs of stripe %llu", (unsigned long long)stripe);
    return;
  }
  while (page < end) {
    uint64_t first;
    if (!cached[page]) {
      page++;
      continue;
    }
    for (first = page; page < end && cached[page]; page++)
      ;
    if (k >= n || runs[k].offset != first * PAGE
        || runs[k].count != (page - first) * PAGE
        || memcmp (runs[k].buf, model + first * PAGE, runs[k].count) != 0)
      fail ("stripe %llu: run %u is not pages %llu-%llu",
            (unsigned long long)stripe, k, (unsigned long long)first,
            (unsigned long long)page - 1);
    k++;
  }
  if (k != n)
    fail ("stripe %llu: %u runs, want %u", (unsigned long long)stripe, n, k);
  journal_cache_runs_free (runs, n);
}

int
main (void)
{
  struct journal_cache c = { 0 };
  uint64_t pos, seq, s, i, bytes = 0;

  srand (7);
  if (journal_cache_init (&c, STRIPE, 1 << 20, 64 << 20) == -1) {
    printf ("init failed\n");
    return 1;
  }
  /* Stripe 5's first page logged first (seq 1), put last. */
  for (i = 0; i < 300; i++) {
    uint64_t page = (uint64_t)rand () % (STRIPES * STRIPE / PAGE);
    if (page / (STRIPE / PAGE) == 5)
      continue;
    bytes += cached[page] ? 0 : PAGE;
    put (&c, page, (uint8_t)(i + 1), 10 + i);
  }
  put (&c, 5 * STRIPE / PAGE + 3, 0x55, 1);
  bytes += PAGE;
  if (journal_cache_bytes (&c) != bytes)
    fail ("%llu bytes cached, want %llu",
          (unsigned long long)journal_cache_bytes (&c),
          (unsigned long long)bytes);
  if (!journal_cache_oldest (&c, &pos, &seq) || seq != 1 || pos != 4096)
    fail ("oldest: seq %llu, want 1 (stripe 5)", (unsigned long long)seq);
  check_overlay (&c, 0, sizeof model);
  check_overlay (&c, 5 * STRIPE + 3 * PAGE - 100, 300);
  check_overlay (&c, 4097, 3 * PAGE + 5);
  for (s = 0; s < STRIPES; s++)
    check_runs (&c, s);
  journal_cache_drop (&c, 5);
  memset (cached + 5 * STRIPE / PAGE, 0, STRIPE / PAGE);
  if (journal_cache_holds (&c, 5))
    fail ("stripe 5 held after its drop");
  if (!journal_cache_oldest (&c, &pos, &seq) || seq != 10)
    fail ("oldest after the drop: seq %llu, want 10",
          (unsigned long long)seq);
  check_overlay (&c, 0, sizeof model);
  for (s = 0; s < STRIPES; s++)
    journal_cache_drop (&c, s);
  if (journal_cache_bytes (&c) != 0 || journal_cache_oldest (&c, &pos, &seq))
    fail ("the cache is not empty after every drop");
  journal_cache_free (&c);
  if (failures) {
    printf ("%u failures\n", failures);
    return 1;
  }
  printf ("journal-cache: pages read back through the overlay, runs, the "
          "oldest by its log, drops\n");
  return 0;
}
