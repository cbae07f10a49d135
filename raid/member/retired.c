/* nbdraid: devices that left the array, closed once no request can
 * still be using them (retired.h).
 *
 * Why two counters are enough: a request that may hold a retired device
 * read its slot before the device left it, so it entered before the
 * epoch moved past that moment, and counts in the previous epoch's
 * counter; one that entered later reads the slot as it is now.  The
 * epoch moves again only once that counter has drained, so no request
 * ever counts in an epoch older than the previous one.
 */
#include <config.h>

#include <stdlib.h>

#include "member.h"
#include "retired.h"

unsigned
retired_enter (struct retired *r)
{
  for (;;) {
    unsigned e = __atomic_load_n (&r->epoch, __ATOMIC_SEQ_CST);

    __atomic_add_fetch (&r->users[e & 1], 1, __ATOMIC_SEQ_CST);
    /* The epoch moved between reading it and counting: the reclaimer
     * may have looked at that counter already.  Count again. */
    if (__atomic_load_n (&r->epoch, __ATOMIC_SEQ_CST) == e)
      return e & 1;
    __atomic_sub_fetch (&r->users[e & 1], 1, __ATOMIC_SEQ_CST);
  }
}

/* The request that entered with ticket is done: it counts in its epoch
 * no more. */
void
retired_exit (struct retired *r, unsigned ticket)
{
  __atomic_sub_fetch (&r->users[ticket], 1, __ATOMIC_SEQ_CST);
}

void
retired_add (struct retired *r, struct member *m)
{
  struct retired_list *l = &r->pending;
  struct member **grown;
  unsigned cap;

  if (!m)
    return;
  if (l->n == l->cap) {
    cap = l->cap ? 2 * l->cap : 16;
    grown = realloc (l->m, cap * sizeof *grown);
    if (!grown)
      return;
    l->m = grown;
    l->cap = cap;
  }
  l->m[l->n++] = m;
}

/* Close every device on l and empty it, keeping its memory. */
static void
close_list (struct retired_list *l)
{
  unsigned i;

  for (i = 0; i < l->n; i++)
    member_close (l->m[i]);
  l->n = 0;
}

void
retired_reclaim (struct retired *r)
{
  struct retired_list swap;
  unsigned e;

  for (;;) {
    e = __atomic_load_n (&r->epoch, __ATOMIC_SEQ_CST);
    if (r->draining.n) {
      if (__atomic_load_n (&r->users[(e - 1) & 1], __ATOMIC_SEQ_CST))
        return;                 /* a request may still hold them */
      close_list (&r->draining);
    }
    if (r->pending.n == 0)
      return;
    swap = r->draining;
    r->draining = r->pending;
    r->pending = swap;
    __atomic_add_fetch (&r->epoch, 1, __ATOMIC_SEQ_CST);
  }
}

void
retired_close_all (struct retired *r)
{
  close_list (&r->pending);
  close_list (&r->draining);
  free (r->pending.m);
  free (r->draining.m);
  r->pending = r->draining = (struct retired_list) { NULL, 0, 0 };
}
