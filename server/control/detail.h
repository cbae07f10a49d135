/* nbdraid: an array's status as mdadm --detail shows it (detail.c). */
#ifndef NBDRAID_DETAIL_H
#define NBDRAID_DETAIL_H

#include <stdio.h>

#include "raid.h"

void detail_text (FILE *fp, const struct raid_status *st);

#endif
