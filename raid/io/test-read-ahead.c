/* nbdraid: read-ahead windows (read-ahead.h) against a disk in memory.
 *
 * Every 4K block of the disk holds its number and a version in every
 * word; a write bumps the version of the blocks it covers.  The cases:
 * a read that continues no stream is not served; a stream is, from
 * windows read whole and ahead of it; a write into a window read ahead
 * is seen by the next read; a stream is not served while the other
 * reads in flight cover its reach, nor a window read to its end; once
 * stopped (the array taken over), none is served; a window whose fill
 * a write overlapped is dropped, not served; and readers streaming
 * beside writers, with the fill threads running, never see a block
 * older than its last write answered before the read began.
 */
#include <config.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read-ahead.h"
#include "test-report.h"

#define BLOCK 4096u
#define DISK_BLOCKS 2048u               /* 8 MiB */
#define DISK_BYTES ((uint64_t)DISK_BLOCKS * BLOCK)
#define WINDOW (256 * 1024)
#define AHEAD (512 * 1024)

/* Fail, naming what should have held, unless it does. */
#define CHECK(cond, ...) \
  do { if (!(cond)) fail (__VA_ARGS__); } while (0)

struct disk {
  pthread_mutex_t lock;
  uint64_t *words;                      /* DISK_BYTES of them, bytewise */
  uint64_t version[DISK_BLOCKS];        /* the last write's, per block */
  uint64_t answered[DISK_BLOCKS];       /* written and forgotten (atomic) */
  unsigned fills;
  uint64_t fill_bytes;
  bool jitter;                          /* fills sleep a little */
  /* Hold the next fill after its copy, until released. */
  bool hold;
  bool held;
  pthread_cond_t cond;
};

static struct disk D;
static struct read_ahead RA;

static uint64_t
word (uint64_t block, uint64_t version)
{
  return block << 32 | version;
}

static void
disk_write_block (uint64_t b)
{
  uint64_t *w = D.words + b * (BLOCK / 8);
  unsigned i;

  D.version[b]++;
  for (i = 0; i < BLOCK / 8; i++)
    w[i] = word (b, D.version[b]);
}

/* A client write of blocks [first, first + n): forget, write, forget,
 * then it counts as answered. */
static void
client_write (uint64_t first, uint64_t n)
{
  uint64_t b, v[64];

  read_ahead_forget (&RA, n * BLOCK, first * BLOCK);
  pthread_mutex_lock (&D.lock);
  for (b = first; b < first + n; b++) {
    disk_write_block (b);
    v[b - first] = D.version[b];
  }
  pthread_mutex_unlock (&D.lock);
  read_ahead_forget (&RA, n * BLOCK, first * BLOCK);
  for (b = first; b < first + n; b++)
    __atomic_store_n (&D.answered[b], v[b - first], __ATOMIC_RELEASE);
}

static int
fill (void *ctx, void *buf, uint64_t len, uint64_t off, bool background)
{
  (void)ctx;
  (void)background;
  pthread_mutex_lock (&D.lock);
  memcpy (buf, (uint8_t *)D.words + off, len);
  D.fills++;
  D.fill_bytes += len;
  if (D.hold) {
    D.held = true;
    pthread_cond_broadcast (&D.cond);
    while (D.hold)
      pthread_cond_wait (&D.cond, &D.lock);
  }
  pthread_mutex_unlock (&D.lock);
  if (D.jitter)
    usleep ((useconds_t) (rand () % 300));
  return 0;
}

/* A reader's request, with reading bytes of the clients' reads in
 * flight: from the windows, else read as the caller would. */
static bool
client_read_beside (void *buf, uint64_t count, uint64_t off,
                    uint64_t reading)
{
  if (read_ahead_serve (&RA, buf, count, off, DISK_BYTES, reading))
    return true;
  pthread_mutex_lock (&D.lock);
  memcpy (buf, (uint8_t *)D.words + off, count);
  pthread_mutex_unlock (&D.lock);
  return false;
}

/* A reader's request, the only one in flight. */
static bool
client_read (void *buf, uint64_t count, uint64_t off)
{
  return client_read_beside (buf, count, off, count);
}

/* Does buf (count bytes at off) hold, block by block, the block's own
 * number and a version at least least[]? */
static bool
holds (const uint8_t *buf, uint64_t count, uint64_t off, const uint64_t *least)
{
  uint64_t b, i, w;

  for (b = 0; b < count / BLOCK; b++)
    for (i = 0; i < BLOCK / 8; i++) {
      memcpy (&w, buf + b * BLOCK + i * 8, 8);
      if (w >> 32 != off / BLOCK + b || (w & 0xffffffff) < least[b]) {
        fprintf (stderr, "block %" PRIu64 " word %" PRIu64 ": block %"
                 PRIu64 " version %" PRIu64 ", want version >= %" PRIu64
                 "\n", off / BLOCK + b, i, w >> 32, w & 0xffffffff,
                 least[b]);
        return false;
      }
    }
  return true;
}

static bool
current (const uint8_t *buf, uint64_t count, uint64_t off)
{
  uint64_t least[64], b;

  for (b = 0; b < count / BLOCK; b++)
    least[b] = D.version[off / BLOCK + b];
  return holds (buf, count, off, least);
}

static void
setup (uint64_t ahead)
{
  uint64_t b;

  memset (D.version, 0, sizeof D.version);
  memset (D.answered, 0, sizeof D.answered);
  for (b = 0; b < DISK_BLOCKS; b++)
    disk_write_block (b);
  D.fills = 0;
  D.fill_bytes = 0;
  if (read_ahead_init (&RA, WINDOW, ahead, 4 * 1024 * 1024, fill, NULL))
    abort ();
}

static void
check_off_and_streams (void)
{
  static uint8_t buf[64 * 1024];

  setup (0);
  CHECK (!client_read (buf, sizeof buf, 0) &&
         !client_read (buf, sizeof buf, sizeof buf) && D.fills == 0,
         "read-ahead 0: no read is served from windows");
  read_ahead_free (&RA);

  setup (AHEAD);
  CHECK (!client_read (buf, sizeof buf, 128 * 1024) && D.fills == 0,
         "a read that continues no stream is the caller's");
  CHECK (client_read (buf, sizeof buf, 192 * 1024) && current (buf, sizeof buf,
                                                            192 * 1024),
         "the read after it is served, with the disk's bytes");
  /* Threads not started: the reader fills the windows it needs, those
   * ahead wait queued. */
  CHECK (D.fills == 1 && D.fill_bytes == WINDOW,
         "its window filled whole (%u fills, %" PRIu64 " bytes)", D.fills,
         D.fill_bytes);
  CHECK (client_read (buf, sizeof buf, 256 * 1024) &&
         client_read (buf, sizeof buf, 320 * 1024) && D.fills == 2 &&
         current (buf, sizeof buf, 320 * 1024),
         "the stream goes on into the window queued ahead");
  CHECK (client_read (buf, sizeof buf, 128 * 1024) && D.fills == 2 &&
         current (buf, sizeof buf, 128 * 1024),
         "a read inside a window costs no fill");

  CHECK (!client_read (buf, sizeof buf, 800 * 1024) && D.fills == 2,
         "a read that continues no stream fills no window queued ahead");

  /* A write into the part of a window the stream has not read yet. */
  client_write ((448 * 1024) / BLOCK + 3, 2);
  CHECK (client_read (buf, sizeof buf, 384 * 1024) &&
         client_read (buf, sizeof buf, 448 * 1024) &&
         current (buf, sizeof buf, 448 * 1024),
         "a write into a window read ahead is seen by the stream");

  /* Another server took the array over. */
  read_ahead_stop (&RA);
  CHECK (!client_read (buf, sizeof buf, 512 * 1024) &&
         !client_read (buf, sizeof buf, 448 * 1024),
         "once stopped, no read is served, in a stream or a window");
  read_ahead_free (&RA);
}

/* A stream reads for itself while the other reads in flight cover its
 * reach, and goes on doing so for a while once they do not; a window
 * read to its end is not served again. */
static void
check_deep_and_passed (void)
{
  static uint8_t buf[64 * 1024];
  uint64_t off, first_served = 0;
  unsigned fills;

  setup (AHEAD);
  client_read (buf, sizeof buf, 0);
  for (off = sizeof buf; off < WINDOW; off += sizeof buf)
    CHECK (!client_read_beside (buf, sizeof buf, off, sizeof buf + AHEAD) &&
           current (buf, sizeof buf, off),
           "a stream with its reach in flight is the caller's (at %"
           PRIu64 ")", off);
  CHECK (D.fills == 0, "a deep stream fills no window (%u fills)", D.fills);

  for (off = WINDOW; off < DISK_BYTES && !first_served; off += sizeof buf)
    if (client_read (buf, sizeof buf, off))
      first_served = off;
  CHECK (first_served > WINDOW,
         "the stream read for itself a while after its depth fell");
  CHECK (first_served != 0 && current (buf, sizeof buf, first_served),
         "then it is served from windows again");

  /* The next window whole, and a part of the one after. */
  off = (first_served / WINDOW + 1) * WINDOW;
  for (; off < (first_served / WINDOW + 2) * WINDOW + sizeof buf;
       off += sizeof buf)
    CHECK (client_read (buf, sizeof buf, off), "the stream goes on (at %"
           PRIu64 ")", off);
  fills = D.fills;
  off = (first_served / WINDOW + 1) * WINDOW;
  /* Neither continues the stream: each takes what is there. */
  CHECK (!client_read (buf, sizeof buf, off) &&
         client_read (buf, sizeof buf, off + WINDOW) &&
         D.fills == fills,
         "a window read to its end is not served again, one part-read is");
  read_ahead_free (&RA);
}

/* The reader's own fill copies, then waits; a write starts and ends
 * meanwhile. */
static void *
held_reader (void *arg)
{
  static uint8_t buf[64 * 1024];
  bool *served = arg;

  *served = client_read (buf, sizeof buf, 64 * 1024);
  return NULL;
}

static void
check_stale_fill (void)
{
  static uint8_t buf[64 * 1024];
  pthread_t t;
  bool served = true;

  setup (AHEAD);
  client_read (buf, sizeof buf, 0);
  pthread_mutex_lock (&D.lock);
  D.hold = true;
  D.held = false;
  pthread_mutex_unlock (&D.lock);
  pthread_create (&t, NULL, held_reader, &served);
  pthread_mutex_lock (&D.lock);
  while (!D.held)
    pthread_cond_wait (&D.cond, &D.lock);
  pthread_mutex_unlock (&D.lock);
  /* The fill holds the old bytes; the write cannot take the disk's lock
   * until the fill lets go, so it forgets first, then writes. */
  read_ahead_forget (&RA, BLOCK, 100 * 1024);
  pthread_mutex_lock (&D.lock);
  disk_write_block (100 * 1024 / BLOCK);
  D.hold = false;
  pthread_cond_broadcast (&D.cond);
  pthread_mutex_unlock (&D.lock);
  read_ahead_forget (&RA, BLOCK, 100 * 1024);
  pthread_join (t, NULL);
  CHECK (!served, "a window whose fill a write overlapped is not served");
  client_read (buf, sizeof buf, 128 * 1024);
  CHECK (client_read (buf, sizeof buf, 64 * 1024 + 128 * 1024) &&
         current (buf, sizeof buf, 192 * 1024),
         "the stream goes on from new windows");
  CHECK (!client_read (buf, sizeof buf, 96 * 1024) ||
         current (buf, sizeof buf, 96 * 1024),
         "the written block reads new");
  read_ahead_free (&RA);
}

#define READERS 4
#define WRITERS 2
#define REGION (DISK_BYTES / READERS)

static bool stop, bad;
static uint64_t served_reads;

static void *
streamer (void *arg)
{
  const uint64_t base = (uint64_t)(uintptr_t)arg * REGION;
  uint8_t *buf = malloc (64 * BLOCK);
  uint64_t pos = 0, least[64], b, n;
  unsigned seed = (unsigned)(uintptr_t)arg;

  if (!buf)
    abort ();

  while (!__atomic_load_n (&stop, __ATOMIC_ACQUIRE) && !bad) {
    n = 1 + (uint64_t)rand_r (&seed) % 64;
    if (pos + n * BLOCK > REGION)
      pos = 0;
    for (b = 0; b < n; b++)
      least[b] = __atomic_load_n (&D.answered[(base + pos) / BLOCK + b],
                                  __ATOMIC_ACQUIRE);
    if (client_read (buf, n * BLOCK, base + pos))
      __atomic_add_fetch (&served_reads, 1, __ATOMIC_RELAXED);
    if (!holds (buf, n * BLOCK, base + pos, least))
      bad = true;
    pos += n * BLOCK;
  }
  free (buf);
  return NULL;
}

static void *
writer (void *arg)
{
  unsigned seed = 1000 + (unsigned)(uintptr_t)arg;
  uint64_t n;

  while (!__atomic_load_n (&stop, __ATOMIC_ACQUIRE)) {
    n = 1 + (uint64_t)rand_r (&seed) % 16;
    client_write ((uint64_t)rand_r (&seed) % (DISK_BLOCKS - n), n);
    usleep (50);
  }
  return NULL;
}

static void
check_readers_beside_writers (void)
{
  pthread_t r[READERS], w[WRITERS];
  unsigned i;

  setup (AHEAD);
  D.jitter = true;
  if (read_ahead_start (&RA))
    abort ();
  for (i = 0; i < READERS; i++)
    pthread_create (&r[i], NULL, streamer, (void *)(uintptr_t)i);
  for (i = 0; i < WRITERS; i++)
    pthread_create (&w[i], NULL, writer, (void *)(uintptr_t)i);
  sleep (2);
  __atomic_store_n (&stop, true, __ATOMIC_RELEASE);
  for (i = 0; i < READERS; i++)
    pthread_join (r[i], NULL);
  for (i = 0; i < WRITERS; i++)
    pthread_join (w[i], NULL);
  read_ahead_free (&RA);
  CHECK (!bad, "streams beside writers read no block older than its "
         "last answered write");
  CHECK (served_reads > 100, "streams were served from windows (%" PRIu64
         " reads)", served_reads);
}

int
main (void)
{
  pthread_mutex_init (&D.lock, NULL);
  pthread_cond_init (&D.cond, NULL);
  D.words = malloc (DISK_BYTES);
  if (!D.words)
    abort ();
  check_off_and_streams ();
  check_deep_and_passed ();
  check_stale_fill ();
  check_readers_beside_writers ();
  free (D.words);
  return failures ? 1 : 0;
}
