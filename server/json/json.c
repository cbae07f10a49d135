/* nbdraid: JSON string escaping (RFC 8259 section 7). */
#include <config.h>

#include "json.h"

void
json_string (FILE *fp, const char *s)
{
  fputc ('"', fp);
  for (; *s; s++) {
    unsigned char c = (unsigned char) *s;
    if (c == '"' || c == '\\')
      fprintf (fp, "\\%c", c);
    else if (c < 0x20)
      fprintf (fp, "\\u%04x", c);
    else
      fputc (c, fp);
  }
  fputc ('"', fp);
}
