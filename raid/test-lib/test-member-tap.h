/* nbdraid unit tests: a member's reads seen by the test.  The test's
 * pread takes the member's place in its ops; the real ops stay at
 * hand for it to call, and come back with member_untap. */
#ifndef NBDRAID_TEST_MEMBER_TAP_H
#define NBDRAID_TEST_MEMBER_TAP_H

#include <stddef.h>
#include <stdint.h>

#include "member.h"

struct member_tap {
  struct member *m;
  const struct member_ops *real;
  struct member_ops ops;
};

static void
member_tap (struct member_tap *t, struct member *m,
            int (*pread) (struct member *, void *, size_t, uint64_t))
{
  t->m = m;
  t->real = m->ops;
  t->ops = *m->ops;
  t->ops.pread = pread;
  m->ops = &t->ops;
}

static void
member_untap (struct member_tap *t)
{
  t->m->ops = t->real;
}

#endif
