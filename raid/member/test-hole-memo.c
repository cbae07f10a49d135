/* nbdraid: what a member last said of its holes (hole-memo.h).
 *
 * An answer covers questions inside its range and no other; a write or
 * zero overlapping it drops it, one beside it does not; an answer
 * sought while a write was under way, or started and finished, is not
 * kept, since it may not have seen that write; forget drops it, and
 * an answer sought before it.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>

#include "hole-memo.h"
#include "test-report.h"

static void
expect (struct hole_memo *h, uint64_t off, uint64_t len, int want,
        const char *when)
{
  struct hole_memo_ticket t;
  int got = hole_memo_recall (h, off, len, &t);

  if (got != want)
    fail ("%s: [%llu, +%llu) recalled as %d, expected %d", when,
          (unsigned long long) off, (unsigned long long) len, got, want);
}

/* A write of [off, off+len), begun and ended. */
static void
write_range (struct hole_memo *h, uint64_t off, uint64_t len)
{
  hole_memo_changing (h, off, len);
  hole_memo_changed (h, 0);
}

/* Ask about [off, off+len): the answer [off, end) is kept with the
 * ticket taken then. */
static void
answer (struct hole_memo *h, uint64_t off, uint64_t end, bool hole)
{
  struct hole_memo_ticket t;

  hole_memo_recall (h, off, end - off, &t);
  hole_memo_keep (h, &t, off, end, hole);
}

static void
test_ranges (void)
{
  struct hole_memo h;

  hole_memo_init (&h);
  expect (&h, 0, 4096, -1, "nothing asked yet");
  answer (&h, 1 << 20, 8 << 20, true);
  expect (&h, 1 << 20, 4096, 1, "the hole's start");
  expect (&h, (8 << 20) - 4096, 4096, 1, "the hole's last page");
  expect (&h, (8 << 20) - 4096, 8192, -1, "past the hole's end");
  expect (&h, (1 << 20) - 4096, 8192, -1, "before the hole's start");
  answer (&h, 0, 4096, false);
  expect (&h, 0, 4096, 0, "data kept");
  expect (&h, 2 << 20, 4096, -1, "the older answer, replaced");

  answer (&h, 1 << 20, 8 << 20, true);
  write_range (&h, 0, 1 << 20);
  expect (&h, 1 << 20, 4096, 1, "a write just before the hole");
  write_range (&h, 8 << 20, 4096);
  expect (&h, 1 << 20, 4096, 1, "a write just after the hole");
  write_range (&h, 5 << 20, 512);
  expect (&h, 1 << 20, 4096, -1, "a write inside the hole");

  answer (&h, 1 << 20, 8 << 20, true);
  hole_memo_forget (&h);
  expect (&h, 1 << 20, 4096, -1, "forgotten");
  {
    struct hole_memo_ticket t;  /* asked before the forget, kept after */

    hole_memo_recall (&h, 1 << 20, 4096, &t);
    hole_memo_forget (&h);
    hole_memo_keep (&h, &t, 1 << 20, 8 << 20, true);
    expect (&h, 1 << 20, 4096, -1, "an answer sought before a forget");
  }

  answer (&h, 0, 8 << 20, true);
  answer (&h, 1 << 20, 1 << 20, false);
  expect (&h, 0, 4096, 1, "an empty answer replaced a kept one");
  hole_memo_destroy (&h);
}

static void
test_writes_while_asking (void)
{
  struct hole_memo h;
  struct hole_memo_ticket t;

  hole_memo_init (&h);
  /* A write starts and ends while the answer is sought: anywhere, it
   * may have been missed (the memo does not know the ranges asked). */
  hole_memo_recall (&h, 0, 4096, &t);
  write_range (&h, 100 << 20, 4096);
  hole_memo_keep (&h, &t, 0, 8 << 20, true);
  expect (&h, 0, 4096, -1, "a write done while asking");

  /* A write under way when the question was asked, done before the
   * answer came. */
  hole_memo_changing (&h, 0, 4096);
  hole_memo_recall (&h, 0, 4096, &t);
  hole_memo_changed (&h, 0);
  hole_memo_keep (&h, &t, 0, 8 << 20, true);
  expect (&h, 0, 4096, -1, "a write under way when asked");

  /* Still under way when the answer came. */
  hole_memo_changing (&h, 0, 4096);
  hole_memo_recall (&h, 0, 4096, &t);
  hole_memo_keep (&h, &t, 0, 8 << 20, true);
  hole_memo_changed (&h, 0);
  expect (&h, 0, 4096, -1, "a write under way throughout");

  /* Quiet again: kept. */
  answer (&h, 0, 8 << 20, true);
  expect (&h, 0, 4096, 1, "no write while asking");
  hole_memo_destroy (&h);
}

static void
test_changed_keeps_errno (void)
{
  struct hole_memo h;

  hole_memo_init (&h);
  hole_memo_changing (&h, 0, 4096);
  errno = EIO;
  if (hole_memo_changed (&h, -1) != -1 || errno != EIO)
    fail ("changed: a failed write's -1 and EIO not passed through");
  hole_memo_destroy (&h);
}

int
main (void)
{
  test_ranges ();
  test_writes_while_asking ();
  test_changed_keeps_errno ();
  if (failures) {
    printf ("%u failure(s)\n", failures);
    return 1;
  }
  printf ("ok: hole memo\n");
  return 0;
}
