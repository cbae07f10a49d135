/* nbdraid: the write journal's write-back cache (md's r5c): pages by
 * stripe, oldest stripe first, and the thread that destages them. */
#include <config.h>

#include <errno.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "journal.h"
#include "journal-cache.h"

#define PAGE R5L_BLOCK_BYTES

/* A cached page: its index in the stripe. */
struct cache_page {
  uint32_t index;
  uint8_t *data;
};

struct cache_stripe {
  uint64_t stripe;
  uint64_t log_pos, log_seq;       /* its oldest write's meta block */
  /* Its pages by index, as many as are cached: a stripe of 16 1M
   * chunks holds thousands of page slots, and a random write fills one. */
  struct cache_page *page;
  unsigned npages, cap;
  bool busy;                       /* picked for a destage */
  struct cache_stripe *hash_next;
  struct cache_stripe *older, *newer; /* by log_seq */
};

/* The oldest and newest stripes: the age list's ends. */
struct age_list {
  struct cache_stripe *oldest, *newest;
};

static struct age_list *
ages (struct journal_cache *c)
{
  /* The list's ends live past the buckets (one allocation). */
  return (struct age_list *)(c->bucket + c->nbuckets);
}

int
journal_cache_init (struct journal_cache *c, uint64_t stripe_bytes,
                    uint64_t stripe_log_bytes, uint64_t ring_bytes)
{
  uint64_t slots;

  c->on = true;
  c->stripe_bytes = stripe_bytes;
  /* A sixteenth of the ring: the tail waits for the oldest page, and
   * destaging them all logs each page again with its parity and meta
   * blocks (four times its bytes, one page of a RAID6 row): the
   * quarter of the ring kept for destages (journal-write.c lead). */
  c->limit = ring_bytes / 16 / PAGE * PAGE;
  if (c->limit < stripe_bytes)
    c->limit = stripe_bytes;
  c->nbuckets = 4096;
  c->bucket = calloc (1, c->nbuckets * sizeof *c->bucket
                             + sizeof (struct age_list));
  if (!c->bucket) {
    errno = ENOMEM;
    return -1;
  }
  /* Destages at once: as many as the quarter of the ring kept for them
   * holds twice over (journal-write.c lead), up to 32, so that writers
   * past the limit rarely wait for a turn; up to 8 threads. */
  slots = ring_bytes / 4 / (2 * stripe_log_bytes);
  slots = slots < 1 ? 1 : slots > 32 ? 32 : slots;
  c->workers = slots < 8 ? slots : 8;
  sem_init (&c->slots, 0, slots);
  pthread_mutex_init (&c->lock, NULL);
  pthread_cond_init (&c->wake, NULL);
  return 0;
}

static void
stripe_free (struct cache_stripe *s)
{
  unsigned i;

  for (i = 0; i < s->npages; i++)
    free (s->page[i].data);
  free (s->page);
  free (s);
}

/* Where page `index` is in s->page, or would go. */
static unsigned
page_slot (const struct cache_stripe *s, uint32_t index)
{
  unsigned lo = 0, hi = s->npages;

  while (lo < hi) {
    unsigned mid = lo + (hi - lo) / 2;
    if (s->page[mid].index < index)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The cached page `index` of s, or NULL. */
static const uint8_t *
page_of (const struct cache_stripe *s, uint32_t index)
{
  unsigned i = page_slot (s, index);

  return i < s->npages && s->page[i].index == index ? s->page[i].data : NULL;
}

/* s's page `index`, a new one if it had none (*added set); NULL when
 * memory is short. */
static uint8_t *
page_get (struct cache_stripe *s, uint32_t index, bool *added)
{
  unsigned i = page_slot (s, index);
  uint8_t *data;

  *added = false;
  if (i < s->npages && s->page[i].index == index)
    return s->page[i].data;
  if (s->npages == s->cap) {
    unsigned cap = s->cap ? 2 * s->cap : 4;
    struct cache_page *grown = realloc (s->page, cap * sizeof *grown);
    if (!grown)
      return NULL;
    s->page = grown;
    s->cap = cap;
  }
  if (!(data = malloc (PAGE)))
    return NULL;
  memmove (&s->page[i + 1], &s->page[i], (s->npages - i) * sizeof *s->page);
  s->page[i] = (struct cache_page){ index, data };
  s->npages++;
  *added = true;
  return data;
}

void
journal_cache_free (struct journal_cache *c)
{
  struct cache_stripe *s, *next;

  if (!c->on)
    return;
  for (s = ages (c)->oldest; s; s = next) {
    next = s->newer;
    stripe_free (s);
  }
  free (c->bucket);
  pthread_mutex_destroy (&c->lock);
  sem_destroy (&c->slots);
  pthread_cond_destroy (&c->wake);
  c->on = false;
}

static struct cache_stripe **
slot_of (struct journal_cache *c, uint64_t stripe)
{
  struct cache_stripe **p = &c->bucket[stripe % c->nbuckets];

  while (*p && (*p)->stripe != stripe)
    p = &(*p)->hash_next;
  return p;
}

/* Link s into the age list by its log_seq: nearly always at the
 * newest end (writers insert in about the order they were logged). */
static void
age_insert (struct journal_cache *c, struct cache_stripe *s)
{
  struct age_list *l = ages (c);
  struct cache_stripe *after = l->newest;

  while (after && after->log_seq > s->log_seq)
    after = after->older;
  s->older = after;
  s->newer = after ? after->newer : l->oldest;
  if (s->newer)
    s->newer->older = s;
  else
    l->newest = s;
  if (after)
    after->newer = s;
  else
    l->oldest = s;
}

static void
age_remove (struct journal_cache *c, struct cache_stripe *s)
{
  struct age_list *l = ages (c);

  if (s->older)
    s->older->newer = s->newer;
  else
    l->oldest = s->newer;
  if (s->newer)
    s->newer->older = s->older;
  else
    l->newest = s->older;
}

int
journal_cache_put (struct journal_cache *c, const uint8_t *buf,
                   uint64_t count, uint64_t offset, uint64_t pos,
                   uint64_t seq)
{
  uint64_t off;
  int r = 0;

  pthread_mutex_lock (&c->lock);
  for (off = 0; off < count && r == 0; off += PAGE) {
    uint64_t at = offset + off, stripe = at / c->stripe_bytes;
    uint32_t index = (uint32_t)(at % c->stripe_bytes / PAGE);
    struct cache_stripe **p = slot_of (c, stripe), *s = *p;
    uint8_t *page;
    bool added;

    if (!s) {
      if (!(s = calloc (1, sizeof *s))) {
        r = -1;
        break;
      }
      s->stripe = stripe;
      s->log_pos = pos;
      s->log_seq = seq;
      *p = s;
      age_insert (c, s);
      c->stripes++;
    }
    if (!(page = page_get (s, index, &added))) {
      r = -1;
      break;
    }
    if (added)
      __atomic_add_fetch (&c->bytes, PAGE, __ATOMIC_RELEASE);
    memcpy (page, buf + off, PAGE);
  }
  pthread_mutex_unlock (&c->lock);
  if (r == -1)
    errno = ENOMEM;
  return r;
}

void
journal_cache_overlay (struct journal_cache *c, uint8_t *buf, uint64_t count,
                       uint64_t offset)
{
  uint64_t at = offset / PAGE * PAGE, end = offset + count;

  if (journal_cache_bytes (c) == 0)
    return;
  pthread_mutex_lock (&c->lock);
  for (; at < end; at += PAGE) {
    struct cache_stripe *s = *slot_of (c, at / c->stripe_bytes);
    uint64_t from = at > offset ? at : offset;
    uint64_t to = at + PAGE < end ? at + PAGE : end;
    const uint8_t *page;

    if (!s || !(page = page_of (s, (uint32_t)(at % c->stripe_bytes / PAGE))))
      continue;
    memcpy (buf + (from - offset), page + (from - at), to - from);
  }
  pthread_mutex_unlock (&c->lock);
}

bool
journal_cache_holds (struct journal_cache *c, uint64_t stripe)
{
  bool held;

  if (journal_cache_bytes (c) == 0)
    return false;
  pthread_mutex_lock (&c->lock);
  held = *slot_of (c, stripe) != NULL;
  pthread_mutex_unlock (&c->lock);
  return held;
}

void
journal_cache_runs_free (struct cache_run *runs, unsigned n)
{
  unsigned i;

  for (i = 0; i < n; i++)
    free (runs[i].buf);
  free (runs);
}

int
journal_cache_runs (struct journal_cache *c, uint64_t stripe,
                    struct cache_run **runs, unsigned *n)
{
  struct cache_stripe *s;
  struct cache_run *out = NULL;
  unsigned i, j, m, k = 0;
  int r = 0;

  pthread_mutex_lock (&c->lock);
  s = *slot_of (c, stripe);
  if (s && s->npages && !(out = calloc (s->npages, sizeof *out)))
    r = -1;
  /* Pages of neighbouring indexes make a run. */
  for (i = 0; s && r == 0 && i < s->npages; i = j) {
    for (j = i + 1;
         j < s->npages && s->page[j].index == s->page[j - 1].index + 1; j++)
      ;
    out[k].offset = stripe * c->stripe_bytes + (uint64_t)s->page[i].index * PAGE;
    out[k].count = (uint64_t)(j - i) * PAGE;
    if (!(out[k].buf = malloc (out[k].count))) {
      r = -1;
      break;
    }
    for (m = i; m < j; m++)
      memcpy (out[k].buf + (uint64_t)(m - i) * PAGE, s->page[m].data, PAGE);
    k++;
  }
  pthread_mutex_unlock (&c->lock);
  if (r == -1) {
    journal_cache_runs_free (out, k);
    errno = ENOMEM;
    return -1;
  }
  *runs = out;
  *n = k;
  return 0;
}

void
journal_cache_drop (struct journal_cache *c, uint64_t stripe)
{
  struct cache_stripe **p, *s;

  pthread_mutex_lock (&c->lock);
  p = slot_of (c, stripe);
  s = *p;
  if (s) {
    *p = s->hash_next;
    age_remove (c, s);
    c->stripes--;
    __atomic_sub_fetch (&c->bytes, (uint64_t)s->npages * PAGE,
                        __ATOMIC_RELEASE);
    stripe_free (s);
  }
  pthread_mutex_unlock (&c->lock);
}

bool
journal_cache_oldest (struct journal_cache *c, uint64_t *pos, uint64_t *seq)
{
  struct cache_stripe *s;

  if (!c->on)
    return false;
  pthread_mutex_lock (&c->lock);
  s = ages (c)->oldest;
  if (s) {
    *pos = s->log_pos;
    *seq = s->log_seq;
  }
  pthread_mutex_unlock (&c->lock);
  return s != NULL;
}

/* Pick the oldest stripe no destage has picked; false if none. */
static bool
pick_oldest (struct journal_cache *c, uint64_t *stripe)
{
  struct cache_stripe *s;

  pthread_mutex_lock (&c->lock);
  for (s = ages (c)->oldest; s && s->busy; s = s->newer)
    ;
  if (s) {
    *stripe = s->stripe;
    s->busy = true;
  }
  pthread_mutex_unlock (&c->lock);
  return s != NULL;
}

/* A picked stripe still cached (its destage failed) may be picked
 * again. */
static void
unpick (struct journal_cache *c, uint64_t stripe)
{
  struct cache_stripe *s;

  pthread_mutex_lock (&c->lock);
  s = *slot_of (c, stripe);
  if (s)
    s->busy = false;
  pthread_mutex_unlock (&c->lock);
}

/* Ring bytes from the oldest cached page's meta block to the head:
 * what the cache keeps the tail from freeing. */
static uint64_t
pinned_bytes (struct raid_array *a)
{
  struct raid_journal *j = &a->journal;
  uint64_t pos, seq, head;

  if (!journal_cache_oldest (&j->cache, &pos, &seq))
    return 0;
  pthread_mutex_lock (&j->lock);
  head = j->head;
  pthread_mutex_unlock (&j->lock);
  return head >= pos ? head - pos : head + j->area_bytes - pos;
}

/* Whether the cache should shrink: over `limit` bytes, or pinning over
 * `pin` bytes of the ring. */
static bool
over (struct raid_array *a, uint64_t limit, uint64_t pin)
{
  return journal_cache_bytes (&a->journal.cache) > limit
         || pinned_bytes (a) > pin;
}

/* Every stripe is being destaged: wait a little for one to end. */
static void
pause_briefly (void)
{
  const struct timespec ms = { 0, 1000000 };

  nanosleep (&ms, NULL);
}

int
journal_cache_destage_oldest (struct raid_array *a)
{
  struct journal_cache *c = &a->journal.cache;
  uint64_t stripe;
  int r;

  if (!pick_oldest (c, &stripe)) {
    if (journal_cache_bytes (c) > 0)
      pause_briefly ();
    return 0;
  }
  r = a->ops->destage (a, stripe);
  unpick (c, stripe);
  return r == 0 ? 1 : -1;
}

int
journal_cache_make_room (struct raid_array *a)
{
  struct journal_cache *c = &a->journal.cache;

  if (over (a, c->limit / 2, a->journal.area_bytes / 8)) {
    pthread_mutex_lock (&c->lock);
    pthread_cond_broadcast (&c->wake);
    pthread_mutex_unlock (&c->lock);
  }
  /* One stripe a write while over: every writer pays its share, none
   * waits for the whole cache to come down (the log's EAGAIN keeps the
   * ring from overflowing meanwhile). */
  if (over (a, c->limit, a->journal.area_bytes / 4)
      && journal_cache_destage_oldest (a) == -1)
    return -1;
  return 0;
}

/* Whether the threads have work: the cache over a quarter of its limit
 * or pinning an eighth of the ring, or anything cached once the journal
 * failed (no more writes come; the members must hold what the cache
 * does). */
static bool
thread_work (struct raid_array *a)
{
  struct journal_cache *c = &a->journal.cache;

  if (__atomic_load_n (&c->stop, __ATOMIC_ACQUIRE))
    return false;
  if (__atomic_load_n (&a->journal.failed, __ATOMIC_ACQUIRE))
    return journal_cache_bytes (c) > 0;
  return over (a, c->limit / 4, a->journal.area_bytes / 8);
}

/* A destage thread (md's r5c_do_reclaim; c->workers of them): woken
 * by a writer past half the limit, and every 100 ms; a failed destage
 * waits for the next round. */
static void *
destage_thread (void *opaque)
{
  struct raid_array *a = opaque;
  struct journal_cache *c = &a->journal.cache;
  struct timespec when;

  while (!__atomic_load_n (&c->stop, __ATOMIC_ACQUIRE)) {
    while (thread_work (a) && journal_cache_destage_oldest (a) == 1)
      ;
    clock_gettime (CLOCK_REALTIME, &when);
    when.tv_nsec += 100000000;
    if (when.tv_nsec >= 1000000000) {
      when.tv_sec++;
      when.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock (&c->lock);
    if (!c->stop)
      pthread_cond_timedwait (&c->wake, &c->lock, &when);
    pthread_mutex_unlock (&c->lock);
  }
  return NULL;
}

int
journal_cache_start (struct raid_array *a)
{
  struct journal_cache *c = &a->journal.cache;
  int e;

  if (!c->on || c->running)
    return 0;
  c->stop = false;
  for (c->running = 0; c->running < c->workers; c->running++)
    if ((e = pthread_create (&c->thread[c->running], NULL, destage_thread,
                             a))) {
      errno = e;
      return -1;
    }
  return 0;
}

int
journal_cache_drain (struct raid_array *a)
{
  struct journal_cache *c = &a->journal.cache;
  int r = 0;

  if (!c->on)
    return 0;
  pthread_mutex_lock (&c->lock);
  __atomic_store_n (&c->stop, true, __ATOMIC_RELEASE);
  pthread_cond_broadcast (&c->wake);
  pthread_mutex_unlock (&c->lock);
  for (; c->running > 0; c->running--)
    pthread_join (c->thread[c->running - 1], NULL);
  while (r >= 0 && journal_cache_bytes (c) > 0)
    r = journal_cache_destage_oldest (a);
  return r < 0 ? -1 : 0;
}
