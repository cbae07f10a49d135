/* nbdraid scan: an array as the config that serves it, or as JSON. */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "scan.h"

/* The nested array a device is, when it is in a role of its array: it
 * then has a section of its own in the same file. */
static struct scan_array *
group_of (const struct scan_device *d)
{
  return d && d->inner && d->place == SCAN_MEMBER ? d->inner : NULL;
}

/* Is name the section name of an array nested in a (at any depth)? */
static bool
taken (const struct scan_array *a, const char *name)
{
  const struct scan_array *g;
  unsigned r;

  for (r = 0; r < a->ref->raid_disks; r++)
    if ((g = group_of (a->members[r])) &&
        (strcmp (g->group, name) == 0 || taken (g, name)))
      return true;
  return false;
}

/* Forget the section names of the arrays nested in a. */
static void
clear_groups (struct scan_array *a)
{
  struct scan_array *g;
  unsigned r;

  for (r = 0; r < a->ref->raid_disks; r++)
    if ((g = group_of (a->members[r]))) {
      g->group[0] = '\0';
      clear_groups (g);
    }
}

/* Name the sections of the arrays nested in a, in top's file: md's
 * name where it is one word no other section (nor top) has, as nbdraid
 * create writes a group's section name; else g0, g1, ... */
static void
name_groups (const struct scan_array *top, struct scan_array *a)
{
  struct scan_array *g;
  char name[sizeof g->group];
  unsigned r, n;

  for (r = 0; r < a->ref->raid_disks; r++) {
    if (!(g = group_of (a->members[r])))
      continue;
    if (g->name[0] && !strpbrk (g->name, " \t#;[]") &&
        strcmp (g->name, top->name) != 0 && !taken (top, g->name))
      snprintf (name, sizeof name, "%s", g->name);
    else {
      n = 0;
      do
        snprintf (name, sizeof name, "g%u", n++);
      while (strcmp (name, top->name) == 0 || taken (top, name));
    }
    memcpy (g->group, name, sizeof name);
    name_groups (top, g);
  }
}

/* A size as the config writes one: 64K, 1M. */
static const char *
size_text (uint64_t bytes, char *buf, size_t len)
{
  if (bytes % (1 << 30) == 0)
    snprintf (buf, len, "%" PRIu64 "G", bytes >> 30);
  else if (bytes % (1 << 20) == 0)
    snprintf (buf, len, "%" PRIu64 "M", bytes >> 20);
  else
    snprintf (buf, len, "%" PRIu64 "K", bytes >> 10);
  return buf;
}

/* How a device is named in the config: its path, "array:NAME" for a
 * nested array with a section, else the array's UUID. */
static void
print_name (FILE *fp, const struct scan_device *d)
{
  if (d->path)
    fprintf (fp, "%s", d->path);
  else if (group_of (d))
    fprintf (fp, "array:%s", d->inner->group);
  else
    fprintf (fp, "array %s (uuid %s, a config of its own)", d->inner->name,
             d->inner->ref->uuid);
}

/* The comment for a device left out of the config. */
static void
print_left_out (FILE *fp, const struct scan_array *a,
                const struct scan_device *d)
{
  static const char *const words[] = {
    [SCAN_STALE] = "stale", [SCAN_DUPLICATE] = "duplicate",
    [SCAN_FAULTY] = "faulty",
  };

  fprintf (fp, "# %s: ", words[d->place]);
  print_name (fp, d);
  if (d->place == SCAN_DUPLICATE) {
    fprintf (fp, " (events %" PRIu64 ", as ", d->info.events);
    print_name (fp, a->members[d->role]);
    fprintf (fp, " in role %u)\n", d->role);
  }
  else
    fprintf (fp, " (events %" PRIu64 ", %" PRIu64 " expected)\n",
             d->info.events, a->ref->events);
}

/* Role r's member line, with a comment when the array starts degraded
 * for it or without it. */
static void
print_member (FILE *fp, const struct scan_array *a, unsigned r)
{
  const struct scan_device *d = a->members[r];

  if (!d && a->ref->array_state[r] == 'A')
    fprintf (fp, "# role %u: no device found, and the superblocks expect "
             "one: serve with degraded=true\n", r);
  else if (!d)
    fprintf (fp, "# role %u: its device failed, as the superblocks "
             "record\n", r);
  else if (scan_is_stale (a, d))
    fprintf (fp, "# role %u: stale (events %" PRIu64 ", %" PRIu64
             " expected): serve with degraded=true; it needs recovery\n", r,
             d->info.events, a->ref->events);
  fprintf (fp, "member = ");
  if (d)
    print_name (fp, d);
  else
    fprintf (fp, "%s", RAID_MEMBER_MISSING);
  fprintf (fp, "\n");
}

/* Array a's [array] and [members] sections, then its nested arrays'. */
static void
print_sections (FILE *fp, const struct scan_array *a, bool top)
{
  const struct raid_member_info *ref = a->ref;
  const struct raid_level *l = raid_level_find (ref->level);
  const char *sp = top ? "" : " ", *section = top ? "" : a->group;
  char buf[64];
  unsigned r;
  size_t i;

  fprintf (fp, "[array%s%s]\n# uuid %s", sp, section, ref->uuid);
  if (!top && strcmp (a->group, a->name))
    fprintf (fp, ", md name '%s'", a->name);
  fprintf (fp, "\n");
  if (top && a->name[0])
    fprintf (fp, "name = %s\n", a->name);
  fprintf (fp, "level = %d\n", ref->level);
  if (l->layouts)
    fprintf (fp, "layout = %s\n",
             raid_layout_name (ref->level, ref->layout, buf, sizeof buf));
  if (l->has_chunk)
    fprintf (fp, "chunk = %s\n", size_text (ref->chunk_bytes, buf,
                                            sizeof buf));
  fprintf (fp, "\n[members%s%s]\n", sp, section);
  for (r = 0; r < ref->raid_disks; r++)
    print_member (fp, a, r);
  for (i = 0; i < a->ndevices; i++)
    if (a->devices[i]->place == SCAN_SPARE && a->devices[i]->path)
      fprintf (fp, "spare = %s\n", a->devices[i]->path);
  for (i = 0; i < a->ndevices; i++)
    if (a->devices[i]->place == SCAN_SPARE && !a->devices[i]->path)
      fprintf (fp, "# spare: array %s (uuid %s, a config of its own: a "
               "spare cannot be an array)\n", a->devices[i]->inner->name,
               a->devices[i]->inner->ref->uuid);
  for (i = 0; i < a->ndevices; i++)
    if (a->devices[i]->place != SCAN_MEMBER &&
        a->devices[i]->place != SCAN_SPARE)
      print_left_out (fp, a, a->devices[i]);
  fprintf (fp, "\n");
  for (r = 0; r < ref->raid_disks; r++)
    if (group_of (a->members[r]))
      print_sections (fp, a->members[r]->inner, false);
}

void
scan_print_config (FILE *fp, struct scan_array *a)
{
  clear_groups (a);
  name_groups (a, a);
  print_sections (fp, a, true);
}

/* A device as JSON: {"path": ...} or {"array": UUID}, with its events. */
static void
json_device (FILE *fp, const struct scan_device *d)
{
  if (d->path) {
    fprintf (fp, "{\"path\": ");
    json_string (fp, d->path);
  }
  else
    fprintf (fp, "{\"array\": \"%s\"", d->inner->ref->uuid);
  fprintf (fp, ", \"events\": %" PRIu64 "}", d->info.events);
}

/* The devices of a placed as place, as a JSON list. */
static void
json_devices (FILE *fp, const struct scan_array *a, enum scan_place place)
{
  const char *sep = "";
  size_t i;

  fprintf (fp, "[");
  for (i = 0; i < a->ndevices; i++)
    if (a->devices[i]->place == place) {
      fprintf (fp, "%s", sep);
      json_device (fp, a->devices[i]);
      sep = ", ";
    }
  fprintf (fp, "]");
}

/* Array a as a JSON object (after a comma unless first), then its
 * nested arrays. */
static void
json_array (FILE *fp, const struct scan_array *a, bool first)
{
  const struct raid_member_info *ref = a->ref;
  const struct raid_level *l = raid_level_find (ref->level);
  char buf[64];
  unsigned r;

  fprintf (fp, "%s\n  {\"uuid\": \"%s\", \"name\": ", first ? "" : ",",
           ref->uuid);
  json_string (fp, a->name);
  fprintf (fp, ", \"level\": %d, \"layout\": ", ref->level);
  if (l->layouts)
    json_string (fp, raid_layout_name (ref->level, ref->layout, buf,
                                       sizeof buf));
  else
    fprintf (fp, "null");
  fprintf (fp, ", \"chunk_bytes\": %" PRIu64 ", \"events\": %" PRIu64
           ", \"degraded\": %s, \"members\": [", l->has_chunk
           ? ref->chunk_bytes : 0, ref->events,
           scan_needs_degraded (a) ? "true" : "false");
  for (r = 0; r < ref->raid_disks; r++) {
    const struct scan_device *d = a->members[r];
    fprintf (fp, "%s", r ? ", " : "");
    if (!d)
      fprintf (fp, "null");
    else if (d->path)
      json_string (fp, d->path);
    else
      fprintf (fp, "\"array:%s\"", d->inner->group);
  }
  fprintf (fp, "], \"spares\": ");
  json_devices (fp, a, SCAN_SPARE);
  fprintf (fp, ", \"stale\": ");
  json_devices (fp, a, SCAN_STALE);
  fprintf (fp, ", \"duplicates\": ");
  json_devices (fp, a, SCAN_DUPLICATE);
  fprintf (fp, ", \"faulty\": ");
  json_devices (fp, a, SCAN_FAULTY);
  if (a->outer) {
    fprintf (fp, ", \"nested_in\": \"%s\", \"group\": ", a->outer->ref->uuid);
    json_string (fp, a->group);
  }
  else
    fprintf (fp, ", \"nested_in\": null, \"group\": null");
  fprintf (fp, "}");
  for (r = 0; r < ref->raid_disks; r++)
    if (group_of (a->members[r]))
      json_array (fp, a->members[r]->inner, false);
}

void
scan_print_json (FILE *fp, struct scan_array *const *arrays, size_t n)
{
  size_t i;

  fprintf (fp, "[");
  for (i = 0; i < n; i++) {
    clear_groups (arrays[i]);
    name_groups (arrays[i], arrays[i]);
    json_array (fp, arrays[i], i == 0);
  }
  fprintf (fp, "\n]\n");
}
