/* nbdraid unit tests: reporting failures.  Each test counts its
 * failures and prints the first few; main exits non-zero if any. */
#ifndef NBDRAID_TEST_REPORT_H
#define NBDRAID_TEST_REPORT_H

#include <stdarg.h>
#include <stdio.h>

static unsigned failures;

static void fail (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

static void
fail (const char *fmt, ...)
{
  va_list ap;

  if (++failures > 30)          /* the first ones tell the story */
    return;
  printf ("FAIL: ");
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  printf ("\n");
}

#endif
