/* nbdraid fuzz targets: an invariant that must hold for every input.
 * A violation aborts, which libFuzzer reports as a crash with the
 * input that caused it. */
#ifndef NBDRAID_FUZZ_CHECK_H
#define NBDRAID_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                     \
  do {                                                  \
    if (!(cond)) {                                      \
      fprintf (stderr, "violated: %s\n", #cond);        \
      abort ();                                         \
    }                                                   \
  } while (0)

#endif
