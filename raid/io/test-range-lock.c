/* nbdraid: byte-range locks (range-lock.h).
 *
 * Ranges that only touch are held at once; one overlapping a range
 * held waits until it is released; a range waits behind an earlier one
 * it overlaps even while that one still waits (no large write starves
 * behind small ones); and threads locking random ranges never hold a
 * byte two at a time (a byte-by-byte owner map says).
 */
#include <config.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "range-lock.h"
#include "test-report.h"

#define SPACE 4096
#define THREADS 8
#define ROUNDS 2000

static struct range_lock lock;

struct waiter {
  uint64_t off, len;
  bool got, release;            /* release: may let go (hold_until_told) */
  pthread_t thread;
};

static void *
take_and_release (void *arg)
{
  struct waiter *w = arg;
  struct range_held h;

  range_lock (&lock, &h, w->off, w->len);
  __atomic_store_n (&w->got, true, __ATOMIC_SEQ_CST);
  range_unlock (&lock, &h);
  return NULL;
}

/* Does a thread locking [off, +len) get it within 100 ms while
 * [0, 8192) is held?  The lock is released before returning. */
static bool
gets_beside (uint64_t off, uint64_t len)
{
  struct waiter w = { .off = off, .len = len };
  struct range_held h;
  bool got;
  int i;

  range_lock (&lock, &h, 0, 8192);
  pthread_create (&w.thread, NULL, take_and_release, &w);
  for (i = 0; i < 100 && !__atomic_load_n (&w.got, __ATOMIC_SEQ_CST); i++)
    usleep (1000);
  got = __atomic_load_n (&w.got, __ATOMIC_SEQ_CST);
  range_unlock (&lock, &h);
  pthread_join (w.thread, NULL);
  if (!w.got)
    fail ("[%llu, +%llu) never got the lock once [0, 8192) was released",
          (unsigned long long) off, (unsigned long long) len);
  return got;
}

static void
test_beside_and_over (void)
{
  if (!gets_beside (8192, 4096))
    fail ("[8192, +4096) waited for [0, 8192), which it only touches");
  if (gets_beside (4096, 8192))
    fail ("[4096, +8192) got the lock while [0, 8192) was held");
  if (gets_beside (8191, 1))
    fail ("[8191, +1) got the lock while [0, 8192) was held");
}

static void *
hold_until_told (void *arg)
{
  struct waiter *w = arg;
  struct range_held h;

  range_lock (&lock, &h, w->off, w->len);
  __atomic_store_n (&w->got, true, __ATOMIC_SEQ_CST);
  while (!__atomic_load_n (&w->release, __ATOMIC_SEQ_CST))
    usleep (1000);
  range_unlock (&lock, &h);
  return NULL;
}

static unsigned
queued (void)
{
  const struct range_held *e;
  unsigned n = 0;

  pthread_mutex_lock (&lock.lock);
  for (e = lock.queue; e; e = e->next)
    n++;
  pthread_mutex_unlock (&lock.lock);
  return n;
}

/* Poll for up to a second until *flag is set or n ranges are queued. */
static void
wait_for (const bool *flag, unsigned n)
{
  int i;

  for (i = 0; i < 1000 && !__atomic_load_n (flag, __ATOMIC_SEQ_CST) &&
       queued () < n; i++)
    usleep (1000);
}

/* [0, 4096) held; big asks for [0, 1M) and waits; small asks for
 * [8192, +4096), beside what is held but inside big: small must wait
 * for big, as a stream of such small writes would starve big. */
static void
test_first_come_first_served (void)
{
  struct waiter big = { .off = 0, .len = 1 << 20 };
  struct waiter small = { .off = 8192, .len = 4096 };
  struct range_held h;

  range_lock (&lock, &h, 0, 4096);
  pthread_create (&big.thread, NULL, hold_until_told, &big);
  wait_for (&big.got, 2);
  pthread_create (&small.thread, NULL, take_and_release, &small);
  wait_for (&small.got, 3);
  if (__atomic_load_n (&small.got, __ATOMIC_SEQ_CST))
    fail ("[8192, +4096) got the lock ahead of [0, 1M), which asked first");
  range_unlock (&lock, &h);
  wait_for (&big.got, 99);
  if (!__atomic_load_n (&big.got, __ATOMIC_SEQ_CST))
    fail ("[0, 1M) did not get the lock once [0, 4096) was released");
  usleep (20000);
  if (__atomic_load_n (&small.got, __ATOMIC_SEQ_CST))
    fail ("[8192, +4096) got the lock while [0, 1M) held it");
  __atomic_store_n (&big.release, true, __ATOMIC_SEQ_CST);
  pthread_join (big.thread, NULL);
  pthread_join (small.thread, NULL);
  if (!small.got)
    fail ("[8192, +4096) never got the lock");
}

/* Who holds each byte now: 0 for nobody, else a thread's number. */
static unsigned owner[SPACE];

static void *
lock_randomly (void *arg)
{
  unsigned me = (unsigned) (uintptr_t) arg, seed = me, i;
  struct range_held h;
  uint64_t off, len, b;

  for (i = 0; i < ROUNDS; i++) {
    off = rand_r (&seed) % SPACE;
    len = 1 + rand_r (&seed) % (SPACE - off < 512 ? SPACE - off : 512);
    range_lock (&lock, &h, off, len);
    for (b = off; b < off + len; b++) {
      unsigned was = __atomic_exchange_n (&owner[b], me, __ATOMIC_SEQ_CST);
      if (was)
        fail ("byte %llu held by threads %u and %u at once",
              (unsigned long long) b, was, me);
    }
    if (rand_r (&seed) % 4 == 0)
      usleep (rand_r (&seed) % 50);
    for (b = off; b < off + len; b++)
      __atomic_store_n (&owner[b], 0, __ATOMIC_SEQ_CST);
    range_unlock (&lock, &h);
  }
  return NULL;
}

static void
test_stress (void)
{
  pthread_t th[THREADS];
  uintptr_t t;

  for (t = 0; t < THREADS; t++)
    pthread_create (&th[t], NULL, lock_randomly, (void *) (t + 1));
  for (t = 0; t < THREADS; t++)
    pthread_join (th[t], NULL);
}

int
main (void)
{
  range_lock_init (&lock);
  test_beside_and_over ();
  test_first_come_first_served ();
  test_stress ();
  range_lock_destroy (&lock);
  return failures ? 1 : 0;
}
