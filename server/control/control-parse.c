/* nbdraid: splitting a control request into its words.
 *
 * Pure: no socket, no array, so it can be fuzzed alone
 * (fuzz/fuzz-control.c).
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "control.h"

/* Take flag out of the words, wherever it is; was it there? */
static bool
take_flag (struct control_request *rq, const char *flag)
{
  int i, j;

  for (i = 1; i < rq->nwords; i++)
    if (strcmp (rq->word[i], flag) == 0) {
      for (j = i; j + 1 < rq->nwords; j++)
        rq->word[j] = rq->word[j + 1];
      rq->nwords--;
      return true;
    }
  return false;
}

int
control_parse (char *line, struct control_request *rq, char *err,
               size_t errlen)
{
  char *save = NULL, *w;
  int i, j;

  memset (rq, 0, sizeof *rq);
  for (w = strtok_r (line, "\t", &save); w; w = strtok_r (NULL, "\t", &save)) {
    if (rq->nwords == CONTROL_MAX_WORDS) {
      snprintf (err, errlen, "more than %d words in the request",
                CONTROL_MAX_WORDS);
      return -1;
    }
    rq->word[rq->nwords++] = w;
  }
  rq->json = take_flag (rq, "--json");
  rq->prometheus = take_flag (rq, "--prometheus");
  rq->force = take_flag (rq, "--force");
  for (i = 1; i < rq->nwords; i++)
    if (strcmp (rq->word[i], "--array") == 0) {
      if (i + 1 == rq->nwords) {
        snprintf (err, errlen, "--array needs a NAME");
        return -1;
      }
      rq->array = rq->word[i + 1];
      for (j = i; j + 2 < rq->nwords; j++)
        rq->word[j] = rq->word[j + 2];
      rq->nwords -= 2;
      break;
    }
  if (rq->nwords == 0) {
    snprintf (err, errlen, "empty command");
    return -1;
  }
  return 0;
}
