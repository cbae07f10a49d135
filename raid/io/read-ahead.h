/* nbdraid: read-ahead for sequential readers.
 *
 * A sequential reader at a low queue depth (dd, nbdcopy's stream, a
 * guest booting through nbd-client) keeps a member or two busy: a 1M
 * read of a RAID6 of 6 at 512K chunks is two members' work, a third of
 * what the array moves.  At any depth, a stream of small requests cuts
 * each member's part of it into pieces that pay a disk's fixed cost a
 * request each (1M reads of a RAID6 of 6 at 32K chunks moved 0.78 of
 * the disks' limit, in pieces of 32K to 128K).  Users of md tune this
 * with blockdev --setra; through NBD the client's read-ahead reaches us
 * as the small requests themselves.
 *
 * So a read that continues an earlier one (a stream) is served from
 * windows: aligned spans of the array, each read whole by one call of
 * the fill function (every member at once, in the largest pieces the
 * layout has), and the windows up to `ahead` bytes past the read are
 * queued for the fill threads.  A read that continues no stream and
 * meets no window is not ours: the caller reads it.  Nor is any
 * stream's while the other reads in flight, all clients', ask for as
 * much as the windows would read ahead: a deep queue keeps the members
 * busy itself.  A window read to its end is dropped: the stream has
 * passed it.
 *
 * Writes forget the windows they touch twice: before they start and
 * once they are done (read_ahead_forget).  A window filling meanwhile
 * is marked stale and dropped when its fill ends, so a window whose
 * bytes a write may have changed under its fill is never served, and a
 * read that starts after a write was answered reads what it wrote.
 */
#ifndef NBDRAID_READ_AHEAD_H
#define NBDRAID_READ_AHEAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Read len bytes at off into buf: 0, or -1 (the window is dropped and
 * its readers read for themselves).  background: a fill thread calls,
 * not a reader. */
typedef int (*read_ahead_fill_fn) (void *ctx, void *buf, uint64_t len,
                                   uint64_t off, bool background);

/* Threads filling queued windows: as many windows of a stream read at
 * once as the default reach holds. */
#define READ_AHEAD_THREADS 4

/* Recent read ends remembered, to tell streams: the bench's dozen
 * readers and some. */
#define READ_AHEAD_STREAMS 32

enum read_ahead_state {
  RA_EMPTY,
  RA_QUEUED,                    /* for the next fill thread or reader */
  RA_FILLING,
  RA_READY,
};

struct read_ahead_window {
  uint64_t off, len;
  uint8_t *buf;                 /* window_bytes, kept once allocated */
  enum read_ahead_state state;
  uint64_t gen;                 /* counts the window's reuses */
  bool stale;                   /* a write touched it while it filled */
  uint64_t served;              /* bytes read from it */
  uint64_t used;                /* tick of its last queueing or read */
};

struct read_ahead {
  uint64_t window_bytes;        /* 0: off */
  uint64_t ahead_bytes;
  read_ahead_fill_fn fill;
  void *ctx;
  pthread_mutex_t lock;
  pthread_cond_t filled;        /* a window's fill ended */
  pthread_cond_t queued;        /* a window waits for a fill thread */
  struct read_ahead_window *win;
  unsigned nwin;
  uint64_t ends[READ_AHEAD_STREAMS];
  unsigned next_end;
  uint64_t tick;
  uint64_t deep_until;           /* streams read for themselves till */
  pthread_t threads[READ_AHEAD_THREADS];
  unsigned started;
  bool stopping;
  bool stopped;                 /* read_ahead_stop: serve nothing */
  /* Atomic (status reads them unlocked): reads served from windows,
   * and the bytes windows read from the array. */
  uint64_t hits, fill_bytes;
};

/* Set ra up: windows of window_bytes, reads kept ahead_bytes ahead of a
 * stream, memory for at most max_bytes of windows.  ahead_bytes 0
 * leaves it off (read_ahead_serve declines every read).  0, or -1 with
 * errno set. */
int read_ahead_init (struct read_ahead *ra, uint64_t window_bytes,
                     uint64_t ahead_bytes, uint64_t max_bytes,
                     read_ahead_fill_fn fill, void *ctx);
/* Start the fill threads (after nbdkit forks); until then readers fill
 * their own windows and none are read ahead.  0, or -1 with errno. */
int read_ahead_start (struct read_ahead *ra);
/* Stop the threads and free everything; nothing for a read_ahead
 * that is off, or all zeros. */
void read_ahead_free (struct read_ahead *ra);

/* Serve count bytes at off of an array of size bytes from windows:
 * true when buf holds them, false when the caller must read them.
 * reading: the bytes all clients' reads in flight ask for, this one's
 * included. */
bool read_ahead_serve (struct read_ahead *ra, void *buf, uint64_t count,
                       uint64_t off, uint64_t size, uint64_t reading);
/* A write of count bytes at off starts or has ended: drop the windows
 * it touches. */
void read_ahead_forget (struct read_ahead *ra, uint64_t count, uint64_t off);
/* The members may change behind the array's back from now on (another
 * server took it over): drop every window and serve none again. */
void read_ahead_stop (struct read_ahead *ra);

#endif
