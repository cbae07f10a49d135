/* nbdraid: writing JSON strings. */
#ifndef NBDRAID_JSON_H
#define NBDRAID_JSON_H

#include <stdio.h>

/* Print s as a quoted, escaped JSON string. */
void json_string (FILE *fp, const char *s);

#endif
