/* nbdraid: checking and arranging members across controllers. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "controllers.h"
#include "member-set.h"

/* Members with no controller named are their own failure domain. */
static const char *
controller_of (const struct raid_config *cfg, unsigned i)
{
  return cfg->members[i].controller;
}

static bool
same_controller (const struct raid_config *cfg, unsigned i, unsigned j)
{
  const char *a = controller_of (cfg, i), *b = controller_of (cfg, j);
  return a && b ? strcmp (a, b) == 0 : i == j;
}

static bool
any_named (const struct raid_config *cfg)
{
  unsigned i;

  for (i = 0; i < cfg->nmembers; i++)
    if (controller_of (cfg, i))
      return true;
  return false;
}

int
controllers_survive (const struct raid_geometry *g,
                     const struct raid_config *cfg, const unsigned *order,
                     char *why, size_t len)
{
  unsigned c, role, n;
  size_t used;

  if (!any_named (cfg))
    return -1;
  for (c = 0; c < cfg->nmembers; c++) {
    struct member_set gone = { { 0 } };

    if (!controller_of (cfg, c))
      continue;
    for (role = 0; role < g->members; role++)
      if (same_controller (cfg, order ? order[role] : role, c))
        member_set_add (&gone, role);
    if (geometry_survives (g, gone.bits))
      continue;
    used = (size_t) snprintf (why, len, "losing controller %s (member%s",
                              controller_of (cfg, c),
                              member_set_count (&gone) > 1 ? "s" : "");
    for (role = 0, n = 0; role < g->members && used < len; role++)
      if (member_set_has (&gone, role))
        used += (size_t) snprintf (why + used, len - used, "%s%u",
                                   n++ ? ", " : " ", role);
    if (used < len)
      snprintf (why + used, len - used, ") would fail the array");
    return 0;
  }
  return 1;
}

/* Deal members out controller by controller: each role takes a member
 * from a controller other than the previous role's if it can, from the
 * one with the most members left.  Copies on neighbouring roles (RAID10
 * n2, f2, o2) then land on different controllers. */
static void
interleave (const struct raid_config *cfg, unsigned *order)
{
  bool used[RAID_MAX_MEMBERS] = { false };
  unsigned role, i, j, left[RAID_MAX_MEMBERS];
  int prev = -1;

  for (i = 0; i < cfg->nmembers; i++)
    for (left[i] = 0, j = 0; j < cfg->nmembers; j++)
      left[i] += same_controller (cfg, i, j);
  for (role = 0; role < cfg->nmembers; role++) {
    int best = -1;
    for (i = 0; i < cfg->nmembers; i++) {
      bool i_ok, best_ok;
      if (used[i])
        continue;
      if (best < 0) {
        best = (int) i;
        continue;
      }
      i_ok = prev < 0 || !same_controller (cfg, i, (unsigned) prev);
      best_ok = prev < 0 ||
        !same_controller (cfg, (unsigned) best, (unsigned) prev);
      if ((i_ok && !best_ok) || (i_ok == best_ok && left[i] > left[best]))
        best = (int) i;
    }
    order[role] = (unsigned) best;
    used[best] = true;
    for (j = 0; j < cfg->nmembers; j++)
      if (same_controller (cfg, j, (unsigned) best))
        left[j]--;
    prev = best;
  }
}

int
controllers_arrange (const struct raid_geometry *g,
                     const struct raid_config *cfg, unsigned *order)
{
  uint64_t seed = 0x2545f4914f6cdd1dULL;
  char why[8];
  unsigned i, attempt;

  interleave (cfg, order);
  if (controllers_survive (g, cfg, order, why, sizeof why) == 1)
    return 0;
  /* Parity and RAID1 survive or not by counts alone. */
  if (g->parity_members || g->level == 1)
    return -1;
  /* Otherwise a bounded random search (xorshift, fixed seed). */
  for (attempt = 0; attempt < 20000; attempt++) {
    for (i = cfg->nmembers - 1; i > 0; i--) {
      unsigned j, t;
      seed ^= seed << 13;
      seed ^= seed >> 7;
      seed ^= seed << 17;
      j = (unsigned) (seed % (i + 1));
      t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    if (controllers_survive (g, cfg, order, why, sizeof why) == 1)
      return 0;
  }
  return -1;
}

void
controllers_describe (const struct raid_config *cfg, char *buf, size_t len)
{
  size_t used = 0;
  unsigned i, j, count;

  buf[0] = '\0';
  for (i = 0; i < cfg->nmembers && used < len; i++) {
    if (!controller_of (cfg, i))
      continue;
    for (j = 0; j < i; j++)
      if (same_controller (cfg, i, j))
        break;
    if (j < i)
      continue;                 /* counted already */
    for (count = 0, j = 0; j < cfg->nmembers; j++)
      count += same_controller (cfg, i, j);
    used += (size_t) snprintf (buf + used, len - used, "%s%s (%u)",
                               used ? ", " : "", controller_of (cfg, i),
                               count);
  }
}
