/* nbdraid: checking and arranging members across controllers. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "controllers.h"
#include "member-set.h"
#include "raid.h"

/* Members with no controller named are their own failure domain. */
static const char *
controller_of (const struct raid_config *cfg, unsigned i)
{
  return cfg->members[i].controller;
}

/* Do members i and j share a failure domain?  One with no controller
 * named shares only with itself. */
static bool
same_controller (const struct raid_config *cfg, unsigned i, unsigned j)
{
  const char *a = controller_of (cfg, i), *b = controller_of (cfg, j);
  return a && b ? strcmp (a, b) == 0 : i == j;
}

/* The config at the top of cfg's stack: it holds the nested arrays. */
static const struct raid_config *
stack_top (const struct raid_config *cfg)
{
  return cfg->top ? cfg->top : cfg;
}

/* The nested array member i is, or NULL for a device. */
static const struct raid_config *
nested (const struct raid_config *cfg, unsigned i)
{
  const char *name = raid_spec_array (cfg->members[i].path);

  return name ? raid_config_find_group (stack_top (cfg), name) : NULL;
}

/* The first controller named under cfg (nested arrays included) after
 * the one at *pos (in a walk of members, depth first); NULL at the end.
 * depth bounds the walk. */
static const char *
nth_name (const struct raid_config *cfg, unsigned *pos, unsigned depth)
{
  unsigned i;

  for (i = 0; i < cfg->nmembers && depth < 8; i++) {
    const struct raid_config *inner = nested (cfg, i);
    const char *name = inner ? nth_name (inner, pos, depth + 1) : NULL;
    if (name)
      return name;
    if (!inner && controller_of (cfg, i) && (*pos)-- == 0)
      return controller_of (cfg, i);
  }
  return NULL;
}

int
controllers_shape (const struct raid_config *cfg, struct raid_geometry *g,
                   char *err, size_t len)
{
  *g = (struct raid_geometry) {
    .level = cfg->level, .layout = cfg->layout, .members = cfg->nmembers,
    .chunk_bytes = cfg->chunk_bytes,
    .member_bytes = 1024 * (cfg->chunk_bytes ? cfg->chunk_bytes : 4096),
  };
  return geometry_init (g, err, len);
}

/* Which roles losing controller name takes out: its devices, and the
 * nested arrays that do not survive it. */
static void
lost_roles (const struct raid_config *cfg, const unsigned *order,
            const char *name, unsigned depth, struct member_set *gone);

/* Does nested array cfg survive the loss of controller name (its own
 * nested arrays judged alike)?  depth bounds the walk. */
static bool
nested_survives (const struct raid_config *cfg, const char *name,
                 unsigned depth)
{
  struct member_set gone = { { 0 } };
  struct raid_geometry g;
  char err[256];

  if (depth > 8 || controllers_shape (cfg, &g, err, sizeof err) == -1)
    return false;
  lost_roles (cfg, NULL, name, depth + 1, &gone);
  return geometry_survives (&g, gone.bits);
}

static void
lost_roles (const struct raid_config *cfg, const unsigned *order,
            const char *name, unsigned depth, struct member_set *gone)
{
  unsigned role;

  for (role = 0; role < cfg->nmembers; role++) {
    unsigned i = order ? order[role] : role;
    const struct raid_config *inner = nested (cfg, i);
    if (inner ? !nested_survives (inner, name, depth)
        : controller_of (cfg, i) && strcmp (controller_of (cfg, i), name) == 0)
      member_set_add (gone, role);
  }
}

int
controllers_survive (const struct raid_geometry *g,
                     const struct raid_config *cfg, const unsigned *order,
                     char *why, size_t len)
{
  const char *name;
  unsigned c, role, n, pos;
  size_t used;

  for (c = 0; (pos = c, name = nth_name (cfg, &pos, 0)); c++) {
    struct member_set gone = { { 0 } };

    lost_roles (cfg, order, name, 0, &gone);
    if (geometry_survives (g, gone.bits))
      continue;
    used = (size_t) snprintf (why, len, "losing controller %s (member%s",
                              name, member_set_count (&gone) > 1 ? "s" : "");
    for (role = 0, n = 0; role < g->members && used < len; role++) {
      unsigned i = order ? order[role] : role;
      if (!member_set_has (&gone, role))
        continue;
      used += (size_t) snprintf (why + used, len - used, "%s%u", n++ ? ", "
                                 : " ", role);
      if (nested (cfg, i) && used < len)
        used += (size_t) snprintf (why + used, len - used, " = %s",
                                   cfg->members[i].path);
    }
    if (used < len)
      snprintf (why + used, len - used, ") would fail the array");
    return 0;
  }
  return c == 0 ? -1 : 1;
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
  /* Parity, and copies on every member (RAID1), survive or not by
   * counts alone. */
  if (g->parity_members || g->copies == g->members)
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

/* Each controller named under cfg (nested arrays included) with the
 * members on it, as "c0 (3), c1 (3)", into buf. */
void
controllers_describe (const struct raid_config *cfg, char *buf, size_t len)
{
  const char *name, *other;
  size_t used = 0;
  unsigned i, j, pos, count;

  buf[0] = '\0';
  for (i = 0; used < len && (pos = i, name = nth_name (cfg, &pos, 0)); i++) {
    for (count = 0, j = 0; (pos = j, other = nth_name (cfg, &pos, 0)); j++) {
      if (strcmp (other, name) != 0)
        continue;
      if (j < i)
        break;                  /* counted already */
      count++;
    }
    if (count)
      used += (size_t) snprintf (buf + used, len - used, "%s%s (%u)",
                                 used ? ", " : "", name, count);
  }
}

int
raid_controllers_report (const struct raid_config *cfg, char *list,
                         size_t listlen, char *why, size_t whylen)
{
  struct raid_geometry g;

  if (controllers_shape (cfg, &g, why, whylen) == -1)
    return -2;
  controllers_describe (cfg, list, listlen);
  return controllers_survive (&g, cfg, NULL, why, whylen);
}
