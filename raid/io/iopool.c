/* nbdraid: the worker pool behind parallel member I/O.
 *
 * A caller publishes its set of operations as a job on a queue; idle
 * workers and the caller itself claim operations one at a time until
 * none are left.  One mutex guards the queue and the counters: the
 * critical sections are a few instructions, the I/O runs unlocked.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "iopool.h"
#include "io-batch.h"

struct job {
  struct io_op *ops;
  size_t n;
  size_t next;                  /* first unclaimed op */
  size_t done;
  iopool_exec_fn exec;
  void *ctx;
  pthread_cond_t finished;
  struct job *queue_next;
};

struct iopool {
  pthread_mutex_t lock;
  pthread_cond_t work;
  struct job *head, *tail;
  pthread_t *threads;
  unsigned nthreads, started;
  bool stopping;
};

/* A pool of `threads` workers, not started: until iopool_start,
 * iopool_run runs everything in the caller. */
struct iopool *
iopool_new (unsigned threads)
{
  struct iopool *p = calloc (1, sizeof *p);

  if (!p)
    return NULL;
  p->threads = calloc (threads ? threads : 1, sizeof *p->threads);
  if (!p->threads) {
    free (p);
    return NULL;
  }
  p->nthreads = threads;
  pthread_mutex_init (&p->lock, NULL);
  pthread_cond_init (&p->work, NULL);
  return p;
}

/* Take j off the queue, its last op claimed.  Lock held. */
static void
dequeue (struct iopool *p, struct job *j)
{
  struct job **pp = &p->head, *prev = NULL;

  while (*pp && *pp != j) {
    prev = *pp;
    pp = &(*pp)->queue_next;
  }
  if (!*pp)
    return;
  *pp = j->queue_next;
  if (p->tail == j)
    p->tail = prev;
}

/* How many ops of a shared set this thread is inside (see
 * iopool_nested).  Initial-exec: in the dlopen'ed plugin the default
 * model had each pool thread's first touch malloc the variable's
 * block, giving threads that never allocate arenas of their own and
 * spreading nbdkit's threads over more of them: the server's peak RSS
 * rose by 10 MB. */
static __thread unsigned nesting
  __attribute__ ((tls_model ("initial-exec")));

bool
iopool_nested (void)
{
  return nesting > 0;
}

/* Claim the next op of j, run it unlocked, count it done.  Called and
 * returns with the lock held. */
static void
run_one (struct iopool *p, struct job *j)
{
  struct io_op *op = &j->ops[j->next++];

  if (j->next == j->n)
    dequeue (p, j);
  pthread_mutex_unlock (&p->lock);
  nesting++;
  j->exec (j->ctx, op);
  nesting--;
  pthread_mutex_lock (&p->lock);
  if (++j->done == j->n)
    pthread_cond_signal (&j->finished);
}

/* A worker thread: run the ops of queued jobs until the pool stops. */
static void *
worker (void *arg)
{
  struct iopool *p = arg;

  pthread_mutex_lock (&p->lock);
  while (!p->stopping) {
    if (p->head)
      run_one (p, p->head);
    else
      pthread_cond_wait (&p->work, &p->lock);
  }
  pthread_mutex_unlock (&p->lock);
  return NULL;
}

int
iopool_start (struct iopool *p)
{
  int r;

  while (p->started < p->nthreads) {
    r = pthread_create (&p->threads[p->started], NULL, worker, p);
    if (r != 0) {
      errno = r;
      return -1;
    }
    p->started++;
  }
  return 0;
}

/* Stop and join the workers and free the pool; NULL is ignored. */
void
iopool_free (struct iopool *p)
{
  unsigned i;

  if (!p)
    return;
  pthread_mutex_lock (&p->lock);
  p->stopping = true;
  pthread_cond_broadcast (&p->work);
  pthread_mutex_unlock (&p->lock);
  for (i = 0; i < p->started; i++)
    pthread_join (p->threads[i], NULL);
  pthread_cond_destroy (&p->work);
  pthread_mutex_destroy (&p->lock);
  free (p->threads);
  free (p);
}

void
iopool_run (struct iopool *p, struct io_op *ops, size_t n,
            iopool_exec_fn exec, void *ctx)
{
  struct job j = { .ops = ops, .n = n, .exec = exec, .ctx = ctx };
  size_t i, wake;

  if (n <= 1 || p->started == 0) {
    for (i = 0; i < n; i++)
      exec (ctx, &ops[i]);
    return;
  }

  pthread_cond_init (&j.finished, NULL);
  pthread_mutex_lock (&p->lock);
  if (p->tail)
    p->tail->queue_next = &j;
  else
    p->head = &j;
  p->tail = &j;
  /* The caller takes one op itself; wake a worker for each other. */
  for (wake = 1; wake < n && wake <= p->started; wake++)
    pthread_cond_signal (&p->work);
  while (j.next < j.n)
    run_one (p, &j);
  while (j.done < j.n)
    pthread_cond_wait (&j.finished, &p->lock);
  pthread_mutex_unlock (&p->lock);
  pthread_cond_destroy (&j.finished);
}
