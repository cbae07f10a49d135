/* nbdraid: memory a loop keeps from one pass to the next. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include "scratch.h"

void *
scratch_get (struct scratch *s, size_t bytes)
{
  void *mem;

  if (bytes <= s->bytes)
    return s->mem;
  if (posix_memalign (&mem, 4096, bytes) != 0) {
    errno = ENOMEM;
    return NULL;
  }
  free (s->mem);
  s->mem = mem;
  s->bytes = bytes;
  return mem;
}

/* Free the memory kept; s is then empty, ready for scratch_get again. */
void
scratch_free (struct scratch *s)
{
  free (s->mem);
  s->mem = NULL;
  s->bytes = 0;
}
