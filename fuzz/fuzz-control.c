/* nbdraid fuzz target: the control socket's request parser.
 *
 * Input: bytes as a client sends them.  Framed as server/control/control.c
 * does (the first line, at most 4095 bytes, refused if it holds a
 * NUL), then split by control_parse: an accepted request has 1 to
 * CONTROL_MAX_WORDS non-empty words, all inside the line, none holding
 * a tab.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "check.h"

#define MAX_REQUEST 4096

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char *line = malloc (MAX_REQUEST), err[256];
  struct control_request rq;
  size_t len = size < MAX_REQUEST - 1 ? size : MAX_REQUEST - 1;
  char *nl;
  int i;

  if (!line)
    return 0;
  memcpy (line, data, len);
  line[len] = '\0';
  nl = memchr (line, '\n', len);
  if (!nl || memchr (line, '\0', (size_t) (nl - line))) {
    free (line);                /* refused by the framing */
    return 0;
  }
  *nl = '\0';
  len = (size_t) (nl - line);

  if (control_parse (line, &rq, err, sizeof err) == -1) {
    CHECK (err[0] != '\0');
    free (line);
    return 0;
  }
  CHECK (rq.nwords >= 1 && rq.nwords <= CONTROL_MAX_WORDS);
  for (i = 0; i < rq.nwords; i++) {
    CHECK (rq.word[i] >= line && rq.word[i] < line + len);
    CHECK (rq.word[i][0] != '\0' && !strchr (rq.word[i], '\t'));
  }
  CHECK (!rq.array || (rq.array >= line && rq.array < line + len));
  free (line);
  return 0;
}
