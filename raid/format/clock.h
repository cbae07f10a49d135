/* nbdraid: the monotonic clock the engine's deadlines, delays and
 * idle timers read. */
#ifndef NBDRAID_CLOCK_H
#define NBDRAID_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

static inline uint64_t
now_ms (void)
{
  return now_ns () / 1000000;
}

#endif
