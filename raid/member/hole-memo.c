/* nbdraid: what a member last said of a range of its bytes. */
#include <config.h>

#include <errno.h>

#include "hole-memo.h"

/* Start with nothing known and no write under way. */
void
hole_memo_init (struct hole_memo *h)
{
  pthread_mutex_init (&h->lock, NULL);
  h->start = h->end = 0;
  h->hole = false;
  h->writes_started = h->writes_done = 0;
}

/* Destroy the memo's lock: no call on it may be under way. */
void
hole_memo_destroy (struct hole_memo *h)
{
  pthread_mutex_destroy (&h->lock);
}

int
hole_memo_recall (struct hole_memo *h, uint64_t off, uint64_t len,
                  struct hole_memo_ticket *t)
{
  int r = -1;

  pthread_mutex_lock (&h->lock);
  if (h->start <= off && off + len <= h->end)
    r = h->hole;
  t->started = h->writes_started;
  t->done = h->writes_done;
  pthread_mutex_unlock (&h->lock);
  return r;
}

/* Keep the answer that [start, end) is all hole or all data, unless a
 * write was under way or done since t was taken. */
void
hole_memo_keep (struct hole_memo *h, const struct hole_memo_ticket *t,
                uint64_t start, uint64_t end, bool hole)
{
  pthread_mutex_lock (&h->lock);
  if (t->started == t->done && h->writes_started == t->started &&
      h->writes_done == t->done && start < end) {
    h->start = start;
    h->end = end;
    h->hole = hole;
  }
  pthread_mutex_unlock (&h->lock);
}

void
hole_memo_changing (struct hole_memo *h, uint64_t off, uint64_t len)
{
  pthread_mutex_lock (&h->lock);
  h->writes_started++;
  if (off < h->end && h->start < off + len)
    h->end = h->start;
  pthread_mutex_unlock (&h->lock);
}

int
hole_memo_changed (struct hole_memo *h, int r)
{
  int saved = errno;

  pthread_mutex_lock (&h->lock);
  h->writes_done++;
  pthread_mutex_unlock (&h->lock);
  errno = saved;
  return r;
}

void
hole_memo_forget (struct hole_memo *h)
{
  pthread_mutex_lock (&h->lock);
  h->end = h->start;
  /* An answer sought before now may come from what was: counted as a
   * write, it is not kept. */
  h->writes_started++;
  h->writes_done++;
  pthread_mutex_unlock (&h->lock);
}
