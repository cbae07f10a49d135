/* nbdraid: the devices a config lists, opened, before assembly places
 * them (candidates.c, place.c). */
#ifndef NBDRAID_CANDIDATES_H
#define NBDRAID_CANDIDATES_H

#include <stdbool.h>
#include <stddef.h>

#include "array.h"

/* Nested arrays: what resolving an "array:NAME" member needs. */
struct nest {
  const struct raid_config *top; /* every nested array's config */
  const struct raid_options *opts;
  struct raid_array *parent; /* owns what it assembles */
};

/* A device the config lists, before it has a place. */
struct candidate {
  struct raid_slot s;
  const struct raid_member_spec *spec;
  bool placed;
  bool flags_changed; /* its line's flags differ from its sb's */
};

/* Open the n devices of c[] and read their superblocks (each c->spec
 * says which); -1 out of memory.  Close and free a slot's device.  The
 * candidate whose superblock speaks for the array, or -1.  Refuse one
 * device listed twice. */
int candidates_open (struct candidate *c, unsigned n,
                     const struct raid_config *cfg,
                     const struct raid_options *opts, struct nest *nest);
void slot_free (struct raid_slot *s);
int candidates_reference (const struct candidate *c, unsigned n);
int candidates_check_distinct (const struct candidate *c, unsigned n, char *err,
                               size_t errlen);

#endif
