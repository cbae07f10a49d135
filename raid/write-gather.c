/* nbdraid: writes to one parity stripe, gathered into one. */
#include <config.h>

#include "write-gather.h"

void
gather_init (struct write_gather *g)
{
  pthread_mutex_init (&g->lock, NULL);
  g->waiting = NULL;
  g->runs = g->taken = 0;
}

void
gather_destroy (struct write_gather *g)
{
  pthread_mutex_destroy (&g->lock);
}

void
gather_add (struct write_gather *g, struct gathered *w)
{
  w->done = false;
  w->err = 0;
  pthread_mutex_lock (&g->lock);
  w->next = g->waiting;
  g->waiting = w;
  pthread_mutex_unlock (&g->lock);
}

static void
unlink_waiting (struct write_gather *g, struct gathered *w)
{
  struct gathered **pp = &g->waiting;

  while (*pp != w)
    pp = &(*pp)->next;
  *pp = w->next;
}

/* The waiting writes to w's stripe, w first, then sorted by offset. */
static size_t
candidates (struct write_gather *g, struct gathered *w, struct gathered **c)
{
  struct gathered *x, *t;
  size_t n = 0, i, j;

  c[n++] = w;
  for (x = g->waiting; x && n < GATHER_MAX; x = x->next)
    if (x != w && x->stripe == w->stripe)
      c[n++] = x;
  for (i = 1; i < n; i++)       /* a handful: insertion sort */
    for (j = i, t = c[j]; j > 0 && c[j - 1]->offset > t->offset; j--) {
      c[j] = c[j - 1];
      c[j - 1] = t;
    }
  return n;
}

static bool
joins (const struct gathered *a, const struct gathered *b)
{
  return a->offset + a->count == b->offset;
}

size_t
gather_take (struct write_gather *g, struct gathered *w,
             struct gathered **run)
{
  struct gathered *c[GATHER_MAX];
  size_t n, at, lo, hi, i;

  pthread_mutex_lock (&g->lock);
  if (w->done) {
    pthread_mutex_unlock (&g->lock);
    return 0;
  }
  n = candidates (g, w, c);
  for (at = 0; c[at] != w; at++)
    ;
  for (lo = at; lo > 0 && joins (c[lo - 1], c[lo]); lo--)
    ;
  for (hi = at + 1; hi < n && joins (c[hi - 1], c[hi]); hi++)
    ;
  for (i = lo; i < hi; i++) {
    run[i - lo] = c[i];
    unlink_waiting (g, c[i]);
  }
  if (hi - lo > 1) {
    g->runs++;
    g->taken += hi - lo;
  }
  pthread_mutex_unlock (&g->lock);
  return hi - lo;
}

void
gather_done (struct write_gather *g, struct gathered **run, size_t n,
             int err)
{
  size_t i;

  pthread_mutex_lock (&g->lock);
  for (i = 0; i < n; i++) {
    run[i]->err = err;
    run[i]->done = true;
  }
  pthread_mutex_unlock (&g->lock);
}
