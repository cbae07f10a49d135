/* nbdraid: read-ahead for sequential readers (read-ahead.h).
 *
 * One mutex guards the windows and the stream ends; fills and the
 * copies' sources are the windows' own buffers, and a window being
 * filled is never reused, so a fill runs unlocked.  Readers copy out
 * under the lock: a copy is a request's bytes, cheap beside the member
 * reads this is for.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "read-ahead.h"

/* Once the reads in flight covered the reach, streams read for
 * themselves for this many rounds of that depth: part of a deep queue
 * is on the wire at any time, not in the engine, and a stream served
 * from windows between its bursts read ahead in single commands again
 * (a third of a 16-deep stream's reads, over four connections a
 * member). */
#define DEEP_ROUNDS 4

/* An untouched window older than this many reads is a stream's that
 * stopped: it may go. */
#define ABANDONED_AFTER(ra) (8 * (uint64_t)(ra)->nwin)

static uint64_t
min64 (uint64_t a, uint64_t b)
{
  return a < b ? a : b;
}

int
read_ahead_init (struct read_ahead *ra, uint64_t window_bytes,
                 uint64_t ahead_bytes, uint64_t max_bytes,
                 read_ahead_fill_fn fill, void *ctx)
{
  unsigned i;

  memset (ra, 0, sizeof *ra);
  if (ahead_bytes == 0 || window_bytes == 0)
    return 0;
  for (i = 0; i < READ_AHEAD_STREAMS; i++)
    ra->ends[i] = UINT64_MAX;
  /* A stream's own windows, the one it reads and those ahead, at least. */
  ra->nwin = (unsigned) (max_bytes / window_bytes);
  if (ra->nwin < ahead_bytes / window_bytes + 2)
    ra->nwin = (unsigned) (ahead_bytes / window_bytes + 2);
  ra->win = calloc (ra->nwin, sizeof *ra->win);
  if (!ra->win)
    return -1;
  pthread_mutex_init (&ra->lock, NULL);
  pthread_cond_init (&ra->filled, NULL);
  pthread_cond_init (&ra->queued, NULL);
  ra->window_bytes = window_bytes;
  ra->ahead_bytes = ahead_bytes;
  ra->fill = fill;
  ra->ctx = ctx;
  return 0;
}

/* Read w now (lock held; returns with it held, w READY or EMPTY). */
static void
fill_window (struct read_ahead *ra, struct read_ahead_window *w,
             bool background)
{
  int r;

  w->state = RA_FILLING;
  pthread_mutex_unlock (&ra->lock);
  r = ra->fill (ra->ctx, w->buf, w->len, w->off, background);
  pthread_mutex_lock (&ra->lock);
  w->state = r == 0 && !w->stale ? RA_READY : RA_EMPTY;
  if (r == 0)
    __atomic_add_fetch (&ra->fill_bytes, w->len, __ATOMIC_RELAXED);
  pthread_cond_broadcast (&ra->filled);
}

/* The queued window a stream needs first: queued first, lowest. */
static struct read_ahead_window *
next_queued (struct read_ahead *ra)
{
  struct read_ahead_window *best = NULL, *w;
  unsigned i;

  for (i = 0; i < ra->nwin; i++) {
    w = &ra->win[i];
    if (w->state == RA_QUEUED &&
        (!best || w->used < best->used ||
         (w->used == best->used && w->off < best->off)))
      best = w;
  }
  return best;
}

static void *
filler (void *arg)
{
  struct read_ahead *ra = arg;
  struct read_ahead_window *w;

  pthread_mutex_lock (&ra->lock);
  while (!ra->stopping) {
    w = next_queued (ra);
    if (w)
      fill_window (ra, w, true);
    else
      pthread_cond_wait (&ra->queued, &ra->lock);
  }
  pthread_mutex_unlock (&ra->lock);
  return NULL;
}

int
read_ahead_start (struct read_ahead *ra)
{
  int r;

  while (ra->window_bytes && ra->started < READ_AHEAD_THREADS) {
    r = pthread_create (&ra->threads[ra->started], NULL, filler, ra);
    if (r != 0) {
      errno = r;
      return -1;
    }
    ra->started++;
  }
  return 0;
}

void
read_ahead_free (struct read_ahead *ra)
{
  unsigned i;

  if (!ra->window_bytes)
    return;
  pthread_mutex_lock (&ra->lock);
  ra->stopping = true;
  pthread_cond_broadcast (&ra->queued);
  pthread_mutex_unlock (&ra->lock);
  for (i = 0; i < ra->started; i++)
    pthread_join (ra->threads[i], NULL);
  ra->started = 0;
  for (i = 0; i < ra->nwin; i++)
    free (ra->win[i].buf);
  free (ra->win);
  ra->win = NULL;
  ra->nwin = 0;
  ra->window_bytes = 0;
  pthread_cond_destroy (&ra->queued);
  pthread_cond_destroy (&ra->filled);
  pthread_mutex_destroy (&ra->lock);
}

/* The window holding byte p, queued, filling or ready, or NULL. */
static struct read_ahead_window *
covering (struct read_ahead *ra, uint64_t p)
{
  unsigned i;

  for (i = 0; i < ra->nwin; i++) {
    struct read_ahead_window *w = &ra->win[i];
    if (w->state != RA_EMPTY && w->off <= p && p - w->off < w->len)
      return w;
  }
  return NULL;
}

/* Remember that a read of [off, end) was made; whether it continues
 * one that ended at off. */
static bool
continues_stream (struct read_ahead *ra, uint64_t off, uint64_t end)
{
  unsigned i;

  for (i = 0; i < READ_AHEAD_STREAMS; i++)
    if (ra->ends[i] == off) {
      ra->ends[i] = end;
      return true;
    }
  ra->ends[ra->next_end++ % READ_AHEAD_STREAMS] = end;
  return false;
}

/* May w be reused, holding nothing of [lo, hi) (being read), nor
 * being filled or waited for: empty (read to its end, or dropped), or
 * abandoned. */
static bool
may_go (const struct read_ahead *ra, const struct read_ahead_window *w,
        uint64_t lo, uint64_t hi)
{
  if (w->state == RA_EMPTY)
    return true;
  if (w->state != RA_READY || (w->off < hi && lo < w->off + w->len))
    return false;
  return ra->tick - w->used > ABANDONED_AFTER (ra);
}

/* A window to reuse: an empty one, else the least recently used of
 * those that may go; NULL if none may.  *spare: how many may. */
static struct read_ahead_window *
reusable (struct read_ahead *ra, uint64_t lo, uint64_t hi, unsigned *spare)
{
  struct read_ahead_window *best = NULL, *w;
  unsigned i;

  *spare = 0;
  for (i = 0; i < ra->nwin; i++) {
    w = &ra->win[i];
    if (!may_go (ra, w, lo, hi))
      continue;
    ++*spare;
    if (!best || (best->state != RA_EMPTY &&
                  (w->state == RA_EMPTY || w->used < best->used)))
      best = w;
  }
  return best;
}

/* Is another window ahead of a stream worth reading, spare windows
 * being free to take?  Only while the windows being read, over all
 * streams, hold less than one stream's reach: read-ahead is there to
 * keep the members busy, and readers that keep them busy themselves
 * (a dozen streams) would only have it read past where they stop.
 * And only while a quarter of the windows stay spare for the ones
 * readers are at: with more streams than memory for their reach, each
 * keeps less ahead rather than losing the window it reads. */
static bool
worth_reading_ahead (const struct read_ahead *ra, unsigned spare)
{
  uint64_t reading = 0;
  unsigned i;

  for (i = 0; i < ra->nwin; i++)
    if (ra->win[i].state == RA_QUEUED || ra->win[i].state == RA_FILLING)
      reading += ra->win[i].len;
  return reading < ra->ahead_bytes + ra->window_bytes &&
    spare > ra->nwin / 4;
}

/* Queue the windows from the one holding off up to reach that are not
 * there yet, while windows may be had; [off, end) is being read. */
static void
queue_windows (struct read_ahead *ra, uint64_t off, uint64_t end,
               uint64_t reach, uint64_t size)
{
  const uint64_t W = ra->window_bytes;
  struct read_ahead_window *w;
  bool queued = false;
  unsigned spare;
  uint64_t p;

  for (p = off / W * W; p < reach; p += W) {
    if (covering (ra, p))
      continue;
    w = reusable (ra, off, end, &spare);
    if (!w || (p >= end && !worth_reading_ahead (ra, spare)) ||
        (!w->buf && !(w->buf = malloc (W))))
      break;
    w->off = p;
    w->len = min64 (W, size - p);
    w->state = RA_QUEUED;
    w->gen++;
    w->stale = false;
    w->served = 0;
    w->used = ra->tick;
    queued = true;
  }
  if (queued)
    pthread_cond_broadcast (&ra->queued);
}

bool
read_ahead_serve (struct read_ahead *ra, void *buf, uint64_t count,
                  uint64_t off, uint64_t size, uint64_t reading)
{
  const uint64_t end = off + count;
  struct read_ahead_window *w;
  uint64_t p, n, gen, deep_until;
  bool stream, ok;

  /* A request as large as a window keeps the members busy itself. */
  if (!ra->window_bytes || count > ra->window_bytes)
    return false;
  pthread_mutex_lock (&ra->lock);
  if (ra->stopped) {
    pthread_mutex_unlock (&ra->lock);
    return false;
  }
  ra->tick++;
  /* A read that lands in a window without continuing a stream (a
   * random one, or a stream's request that overtook the one before)
   * takes what is there, and reads nothing ahead.  So does every
   * stream while the other reads in flight, all clients', cover the
   * reach: they keep the members busy themselves, in as many requests
   * as they sent, where windows would read the same bytes a window at
   * a time (a RAID1 window is one command to one copy: over a 2 ms
   * link, 16 reads of 1M in flight moved 1600 MB/s by themselves,
   * 490-1100 through windows). */
  deep_until = ra->tick + DEEP_ROUNDS * (reading / count);
  if (reading - count >= ra->ahead_bytes && deep_until > ra->deep_until)
    ra->deep_until = deep_until;
  stream = continues_stream (ra, off, end) && ra->tick >= ra->deep_until;
  if (stream)
    queue_windows (ra, off, end, min64 (size, end + ra->ahead_bytes), size);
  for (p = off; p < end; p += n) {
    w = covering (ra, p);
    /* Only a stream fills a window for itself: a window for a random
     * read would read a window's bytes for its few. */
    if (!w || (w->state == RA_QUEUED && !stream))
      break;
    gen = w->gen;
    if (w->state == RA_QUEUED)
      fill_window (ra, w, false);
    while (w->gen == gen && w->state == RA_FILLING)
      pthread_cond_wait (&ra->filled, &ra->lock);
    if (w->gen != gen || w->state != RA_READY)
      break;
    n = min64 (end, w->off + w->len) - p;
    memcpy ((uint8_t *)buf + (p - off), w->buf + (p - w->off), n);
    w->served += n;
    w->used = ra->tick;
    /* Read to its end (as many bytes served as it holds, a part read
     * twice counting twice): its stream has passed.  Kept, it would serve
     * the stream's next pass from memory (a benchmark's loop over a
     * region, faster than the members can be), and read-ahead is not
     * a cache: the client has its own. */
    if (w->served >= w->len)
      w->state = RA_EMPTY;
  }
  ok = p >= end;
  if (ok)
    __atomic_add_fetch (&ra->hits, 1, __ATOMIC_RELAXED);
  pthread_mutex_unlock (&ra->lock);
  return ok;
}

/* Drop the windows holding any of [lo, hi).  Lock held. */
static void
drop (struct read_ahead *ra, uint64_t lo, uint64_t hi)
{
  unsigned i;

  for (i = 0; i < ra->nwin; i++) {
    struct read_ahead_window *w = &ra->win[i];
    if (w->state == RA_EMPTY || w->off >= hi || lo >= w->off + w->len)
      continue;
    if (w->state == RA_FILLING)
      w->stale = true;
    else
      w->state = RA_EMPTY;
  }
}

void
read_ahead_forget (struct read_ahead *ra, uint64_t count, uint64_t off)
{
  if (!ra->window_bytes)
    return;
  pthread_mutex_lock (&ra->lock);
  drop (ra, off, off + count);
  pthread_mutex_unlock (&ra->lock);
}

void
read_ahead_stop (struct read_ahead *ra)
{
  if (!ra->window_bytes)
    return;
  pthread_mutex_lock (&ra->lock);
  ra->stopped = true;
  drop (ra, 0, UINT64_MAX);
  pthread_mutex_unlock (&ra->lock);
}
