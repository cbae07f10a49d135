/* nbdraid: devices that left the array are closed once no request can
 * hold them (retired.h), and not before: a request that entered before
 * a device left keeps it open until it exits; one that entered after
 * does not; under threads swapping devices while others use them, no
 * device is used after its close; once no request runs, one reclaim
 * closes every device that left, each exactly once.
 */
#include <config.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "member.h"
#include "retired.h"
#include "test-report.h"

/* A device that records its close, and stays readable after it so that
 * a use after close is seen, not a crash. */
struct fake {
  struct member m;
  int closes;
};

static void
fake_close (struct member *m)
{
  __atomic_add_fetch (&((struct fake *) m)->closes, 1, __ATOMIC_SEQ_CST);
}

static const struct member_ops fake_ops = { .kind = "fake",
                                            .close = fake_close };

static struct fake *
fake_new (void)
{
  struct fake *f = calloc (1, sizeof *f);

  if (!f) {
    perror ("calloc");
    exit (1);
  }
  f->m.ops = &fake_ops;
  return f;
}

static void
expect_closes (const struct fake *f, int want, const char *when)
{
  int got = __atomic_load_n (&f->closes, __ATOMIC_SEQ_CST);

  if (got != want)
    fail ("%s: closed %d times, expected %d", when, got, want);
}

static void
test_in_order (void)
{
  struct retired r = { 0 };
  struct fake *idle = fake_new (), *held = fake_new (), *first = fake_new (),
    *second = fake_new (), *late = fake_new ();
  unsigned t1, t2, t3;

  retired_add (&r, &idle->m);
  retired_reclaim (&r);
  expect_closes (idle, 1, "left with no request running");

  t1 = retired_enter (&r);
  retired_add (&r, &held->m);
  retired_reclaim (&r);
  expect_closes (held, 0, "left while a request that entered before ran");
  retired_reclaim (&r);
  expect_closes (held, 0, "that request still running, asked again");
  retired_exit (&r, t1);
  retired_reclaim (&r);
  expect_closes (held, 1, "that request gone");

  /* A request entering between two departures holds the second, which
   * it may have read, but not the first, which had left already. */
  t1 = retired_enter (&r);
  retired_add (&r, &first->m);
  retired_reclaim (&r);
  t2 = retired_enter (&r);
  retired_add (&r, &second->m);
  retired_reclaim (&r);
  expect_closes (first, 0, "first, its request running");
  retired_exit (&r, t1);
  retired_reclaim (&r);
  expect_closes (first, 1, "first, its request gone, a later one running");
  expect_closes (second, 0, "second, a request that saw it running");
  retired_exit (&r, t2);
  retired_reclaim (&r);
  expect_closes (second, 1, "second, every request gone");

  /* One that entered after a device left does not hold it. */
  t1 = retired_enter (&r);
  retired_add (&r, &late->m);
  retired_reclaim (&r);
  t3 = retired_enter (&r);
  retired_exit (&r, t1);
  retired_reclaim (&r);
  expect_closes (late, 1, "left before the request still running entered");
  retired_exit (&r, t3);

  retired_close_all (&r);
  expect_closes (idle, 1, "after close_all");
  free (idle);
  free (held);
  free (first);
  free (second);
  free (late);
}

/* Threads read "the slot" and use its device while the main thread
 * puts a new device in it, retires the old one and reclaims. */
#define READERS 3
#define SWAPS 20000

struct shared {
  struct retired r;
  struct fake *slot;
  bool stop;
  unsigned long used_after_close;
};

static void *
reader (void *arg)
{
  struct shared *s = arg;
  unsigned long bad = 0;

  while (!__atomic_load_n (&s->stop, __ATOMIC_SEQ_CST)) {
    unsigned t = retired_enter (&s->r);
    struct fake *f = __atomic_load_n (&s->slot, __ATOMIC_SEQ_CST);
    int i;

    for (i = 0; i < 50; i++)    /* "I/O" on it, checked all along */
      bad += __atomic_load_n (&f->closes, __ATOMIC_SEQ_CST) != 0;
    retired_exit (&s->r, t);
  }
  __atomic_add_fetch (&s->used_after_close, bad, __ATOMIC_SEQ_CST);
  return NULL;
}

static void
test_threads (void)
{
  static struct fake *all[SWAPS + 1];
  struct shared s = { .slot = NULL };
  pthread_t th[READERS];
  unsigned i;

  all[0] = s.slot = fake_new ();
  for (i = 0; i < READERS; i++)
    if (pthread_create (&th[i], NULL, reader, &s) != 0) {
      perror ("pthread_create");
      exit (1);
    }
  for (i = 1; i <= SWAPS; i++) {
    struct fake *old = s.slot;

    all[i] = fake_new ();
    __atomic_store_n (&s.slot, all[i], __ATOMIC_SEQ_CST);
    retired_add (&s.r, &old->m);
    retired_reclaim (&s.r);
  }
  __atomic_store_n (&s.stop, true, __ATOMIC_SEQ_CST);
  for (i = 0; i < READERS; i++)
    pthread_join (th[i], NULL);
  if (s.used_after_close)
    fail ("threads: %lu uses of a device after its close",
          s.used_after_close);
  /* With no request left, one reclaim closes whatever had left. */
  retired_add (&s.r, &s.slot->m);
  retired_reclaim (&s.r);
  for (i = 0; i <= SWAPS; i++)
    if (all[i]->closes != 1) {
      fail ("threads: device %u closed %d times, expected once", i,
            all[i]->closes);
      break;
    }
  retired_close_all (&s.r);
  for (i = 0; i <= SWAPS; i++)
    free (all[i]);
}

int
main (void)
{
  test_in_order ();
  test_threads ();
  if (failures) {
    printf ("%u failures\n", failures);
    return 1;
  }
  printf ("ok: retired devices closed once, and only when unused\n");
  return 0;
}
