/* nbdraid: what a member last said of a range of its bytes, all hole
 * or all data, kept until a write or zero overlaps it.
 *
 * Asking costs: a round trip for an NBD member, and for a file on
 * tmpfs that fallocate reserved, a walk of every page up to the next
 * written one (milliseconds a gigabyte).  Rebuild, resync, check and
 * the client's block status ask about one piece after the next, so the
 * one answer covers the questions that follow.  An answer is kept only
 * if no write was under way or done while it was sought: it might not
 * have seen that write.
 */
#ifndef NBDRAID_HOLE_MEMO_H
#define NBDRAID_HOLE_MEMO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct hole_memo {
  pthread_mutex_t lock;
  uint64_t start, end;          /* [start, end) is known; empty if equal */
  bool hole;
  uint64_t writes_started, writes_done;
};

/* Taken before asking, handed back with the answer. */
struct hole_memo_ticket {
  uint64_t started, done;
};

void hole_memo_init (struct hole_memo *h);
void hole_memo_destroy (struct hole_memo *h);

/* 1 if [off, off+len) is known to be a hole, 0 if known to hold data,
 * -1 if not known: then ask, and keep the answer with *t. */
int hole_memo_recall (struct hole_memo *h, uint64_t off, uint64_t len,
                      struct hole_memo_ticket *t);
void hole_memo_keep (struct hole_memo *h, const struct hole_memo_ticket *t,
                     uint64_t start, uint64_t end, bool hole);

/* Around every write or zero of [off, off+len): changing before it,
 * changed with its result r after it, which returns r (errno kept). */
void hole_memo_changing (struct hole_memo *h, uint64_t off, uint64_t len);
int hole_memo_changed (struct hole_memo *h, int r);

/* What was known may no longer be (an NBD member's server came back:
 * it may be another); answers sought before are not kept either. */
void hole_memo_forget (struct hole_memo *h);

#endif /* NBDRAID_HOLE_MEMO_H */
