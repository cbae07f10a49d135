/* nbdraid: what the copies family's files (RAID0, RAID1, RAID10)
 * share: io-copies.c serves requests, scrub-copies.c resyncs and
 * checks, rebuild-copies.c rebuilds a member from the other copies.
 */
#ifndef NBDRAID_COPIES_H
#define NBDRAID_COPIES_H

#include "array.h"

/* May copy p serve bytes up to end_within of its unit: its member not
 * in bad, and usable that far into its data area? */
bool copies_place_usable (const struct raid_array *a,
                          const struct members_view *v,
                          const struct member_set *bad,
                          const struct place *p, uint64_t end_within);

/* A write-mostly copy (md's WriteMostly1, a far mirror): read only when
 * no other copy can serve. */
bool copies_write_mostly (const struct raid_array *a, const struct place *p);

/* The copy a resync copies over the others, and the only one read
 * where the resync has not been (io-copies.c says which); NULL if none
 * of places[0..n) is usable. */
const struct place *copies_sync_source (const struct raid_array *a,
                                        const struct members_view *v,
                                        const struct member_set *bad,
                                        const struct place *places,
                                        unsigned n, uint64_t end_within);

/* The level ops scrub-copies.c and rebuild-copies.c serve (levels.h). */
uint64_t copies_sync_unit_of (const struct raid_array *a, uint64_t offset);
uint64_t copies_sync_units (const struct raid_array *a);
int copies_sync (struct raid_array *a, uint64_t first, uint64_t n,
                 uint64_t *done);
int copies_check (struct raid_array *a, uint64_t first, uint64_t n,
                  bool repair, uint64_t *mismatches);
int copies_reconstruct (struct raid_array *a, unsigned m, uint64_t off,
                        uint64_t len, const struct member_set *gone,
                        uint8_t *out, struct scratch *scratch);
bool copies_unwritten (struct raid_array *a, unsigned m, uint64_t off,
                       uint64_t len, const struct member_set *gone);
void copies_member_keys (const struct raid_array *a, unsigned m,
                         uint64_t first, uint64_t last,
                         void (*fn) (void *, uint64_t), void *opaque);

#endif
