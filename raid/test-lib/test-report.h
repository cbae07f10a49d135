/* nbdraid unit tests: reporting failures.  Each test counts its
 * failures and prints the first few ("FAIL: ..." on stdout, from any
 * thread); main exits non-zero if any. */
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

  if (__atomic_add_fetch (&failures, 1, __ATOMIC_SEQ_CST) > 30)
    return;                     /* the first ones tell the story */
  flockfile (stdout);
  printf ("FAIL: ");
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  printf ("\n");
  funlockfile (stdout);
}

#endif
