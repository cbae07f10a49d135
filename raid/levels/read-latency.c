/* nbdraid: which copies of a mirror are slow to read.
 *
 * A mirror of a local disk and a remote one (an NBD export across a
 * link) should read the local copy: spreading reads evenly makes half
 * of them wait for the link.  DRBD's read-balancing and md's choice of
 * the nearest head favour the near copy the same way.  The array keeps
 * each member's average read time (array.c: exec_op, struct member's
 * read_ns, over the last eight reads or so); here a copy whose average
 * is far above the fastest of its partners' becomes slow, and the
 * copies family reads it only when no other copy can serve, as it does
 * write-mostly ones (which stay out of this: their flag already says
 * where to read).
 *
 * A role's partners are the roles holding a copy of some unit it holds
 * (geometry_role_partners): every other mirror of a RAID1, the pair of
 * a RAID10 n2 over an even count.  Only they could serve its reads
 * instead, so only they are its measure.  Beside the fastest role of
 * the whole array, a wide array of noisy members (RAID10 over 16
 * throttled loop devices, read times 0.4-8.5 ms) had 13 of its 16
 * members slow at a time, and which pairs were read from one copy only
 * depended on the moment (client-tests/bench/FINDINGS.md, "16 members
 * after the change").  A remote copy is still slow: its partners are
 * the local copies.  A role none of whose partners has been read yet
 * is not slow: there is nothing to measure it by.
 *
 * The rule has hysteresis, so that copies near the line do not swap
 * places on every sample: a copy becomes slow when its average is more
 * than SLOW_RATIO times the fastest's and more than SLOW_GAP_NS above
 * it, and stops being slow only when it is within half of either (under
 * SLOW_RATIO / 2 times, or SLOW_GAP_NS / 2 above).  Copies of one kind
 * (two local disks, two remote ones) stay well inside the line, whatever
 * the sizes and the page cache do to single reads (and array.c caps
 * what one late read adds), and share the reads as before, by load and
 * by turn.
 *
 * A slow copy that is never read would keep its average forever, and a
 * link that got faster would never be noticed.  So a slow copy is
 * probed: one request reads it first, once PROBE_REQUESTS requests and
 * PROBE_NS have both passed since its last probe.  The request count
 * bounds what probes cost when reads are few (at most one in
 * PROBE_REQUESTS waits for the slow copy), the time when they are many
 * (at most 1000 / PROBE_MS probes a second).  A copy that became as
 * fast as the others drifts back under the line in a score of probes
 * (each moves its average an eighth of the way), a couple of seconds
 * under load.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "read-latency.h"

#define SLOW_RATIO 4
#define SLOW_GAP_NS 250000
#define PROBE_REQUESTS 64
#define PROBE_MS 100
#define PROBE_NS (PROBE_MS * 1000000ULL)

/* One role's standing; slow and the probe fields are read and written
 * atomically, and races at worst add a probe. */
struct role_latency {
  bool slow;
  unsigned probe_turn;          /* the request turn of its last probe */
  uint64_t probe_ns;            /* when (now_ns) */
  struct member_set partners;   /* set once, by read_latency_new */
};

struct read_latency {
  unsigned members;
  struct role_latency role[];
};

struct read_latency *
read_latency_new (const struct raid_geometry *g)
{
  struct read_latency *rl;
  unsigned m;

  rl = calloc (1, sizeof *rl + g->members * sizeof rl->role[0]);
  if (!rl)
    return NULL;
  rl->members = g->members;
  for (m = 0; m < g->members; m++)
    geometry_role_partners (g, m, rl->role[m].partners.bits);
  return rl;
}

void
read_latency_free (struct read_latency *rl)
{
  free (rl);
}

/* Role m's average read time, or 0 if it has none, cannot be read or
 * is write-mostly. */
static uint64_t
role_read_ns (const struct raid_array *a, unsigned m)
{
  const struct raid_slot *s = &a->slots[m];
  enum slot_state state = slot_state (s);

  if ((state != SLOT_ACTIVE && state != SLOT_RECOVERING) || !s->io ||
      (s->sb.devflags & RAID_DEVFLAG_WRITE_MOSTLY))
    return 0;
  return __atomic_load_n (&s->io->read_ns, __ATOMIC_RELAXED);
}

/* The lowest average read time among role m's partners, or 0 if none
 * of them has one. */
static uint64_t
fastest_partner (const struct read_latency *rl, unsigned m, const uint64_t *ns)
{
  const struct member_set *p = &rl->role[m].partners;
  uint64_t fastest = 0;
  unsigned w;

  for (w = 0; w < sizeof p->bits / sizeof p->bits[0]; w++) {
    uint64_t bits = p->bits[w];

    while (bits) {
      unsigned q = w * 64 + (unsigned)__builtin_ctzll (bits);

      bits &= bits - 1;
      if (ns[q] && (!fastest || ns[q] < fastest))
        fastest = ns[q];
    }
  }
  return fastest;
}

/* Is a copy averaging ns slow beside its fastest partner, given whether
 * it was (the hysteresis)?  A copy faster than that partner fails the
 * ratio, so the gap is taken only of a larger ns. */
static bool
is_slow (uint64_t ns, uint64_t fastest, bool was)
{
  if (was)
    return ns >= SLOW_RATIO / 2 * fastest &&
      ns - fastest >= SLOW_GAP_NS / 2;
  return ns > SLOW_RATIO * fastest && ns - fastest > SLOW_GAP_NS;
}

/* Is a probe of role r due at request turn?  Claims it if so. */
static bool
claim_probe (struct role_latency *r, unsigned turn)
{
  unsigned last = __atomic_load_n (&r->probe_turn, __ATOMIC_RELAXED);
  uint64_t at, now;

  if (turn - last < PROBE_REQUESTS)
    return false;
  at = __atomic_load_n (&r->probe_ns, __ATOMIC_RELAXED);
  now = now_ns ();
  if (now - at < PROBE_NS ||
      !__atomic_compare_exchange_n (&r->probe_ns, &at, now, false,
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    return false;
  __atomic_store_n (&r->probe_turn, turn, __ATOMIC_RELAXED);
  return true;
}

void
read_latency_plan (struct read_latency *rl, const struct raid_array *a,
                   unsigned turn, const struct member_set *first,
                   struct member_set *slow, int *probe)
{
  uint64_t ns[RAID_MAX_MEMBERS];
  unsigned m;

  memset (slow, 0, sizeof *slow);
  *probe = -1;
  for (m = 0; m < rl->members; m++)
    ns[m] = role_read_ns (a, m);
  for (m = 0; m < rl->members; m++) {
    struct role_latency *r = &rl->role[m];
    bool was = __atomic_load_n (&r->slow, __ATOMIC_RELAXED);
    uint64_t fastest = ns[m] ? fastest_partner (rl, m, ns) : 0;
    bool now = fastest && is_slow (ns[m], fastest, was);

    if (now != was)
      __atomic_store_n (&r->slow, now, __ATOMIC_RELAXED);
    if (!now)
      continue;
    if (*probe == -1 && member_set_has (first, m) && claim_probe (r, turn))
      *probe = (int) m;
    else
      member_set_add (slow, m);
  }
}

bool
read_latency_slow (const struct read_latency *rl, unsigned m)
{
  return m < rl->members
         && __atomic_load_n (&rl->role[m].slow, __ATOMIC_RELAXED);
}
