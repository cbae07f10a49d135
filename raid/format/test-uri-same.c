/* nbdraid: test uri_same (raid/format/uri-same.c): spellings of one
 * NBD export are the same, URIs that differ in what they name are not,
 * whichever way round they are given.
 */
#include <config.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test-report.h"
#include "uri-same.h"

#define ELEMS(a) (sizeof (a) / sizeof (a)[0])

/* "^" in a case stands for a scratch directory holding the file "s",
 * the file "t" and the symlink "link" to s. */
static const struct {
  const char *a, *b;
  bool same;
} cases[] = {
  /* The scheme and the host are case-insensitive. */
  { "nbd://host/exp", "NBD://HOST/exp", true },
  { "nbds+unix:///e?socket=/s", "NBDS+Unix:///e?socket=/s", true },
  { "nbds://alice@[::1]/e", "nbds://alice@[::1]:10809/e", true },
  /* No port, an empty one and 10809 are one port. */
  { "nbd://host:10809", "nbd://host", true },
  { "nbd://host:/e", "nbd://host:10809/e", true },
  { "nbd://host:10810/e", "nbd://host/e", false },
  { "nbd://host:port/e", "nbd://HOST:port/e", false },
  /* The export: "" and "/" are the empty one, escapes are decoded,
   * its case counts. */
  { "nbd://host", "nbd://host/", true },
  { "nbd+unix:///?socket=/s", "nbd+unix://?socket=/s", true },
  { "nbd://host/", "nbd://host//", false },
  { "nbd://host/a%20b", "nbd://host/a b", true },
  { "nbd://host/%41", "nbd://host/A", true },
  { "nbd://host/a%2fb", "nbd://host/a/b", true },
  { "nbd://host/exp", "nbd://host/EXP", false },
  { "nbd://host/%zz", "nbd://host/%ZZ", false },
  { "nbd://host/%00", "nbd://host/%000", false },
  { "nbd://host/e%", "nbd://host/e%25", false },
  /* Schemes that differ are other transports. */
  { "nbd://host/exp", "nbds://host/exp", false },
  { "nbd://localhost/e", "nbd+unix:///e?socket=/s", false },
  /* The user (TLS) is part of the name. */
  { "nbds://alice@host/e", "nbds://bob@host/e", false },
  { "nbds://alice@host/e", "nbds://host/e", false },
  { "nbds://al%69ce@host/e", "nbds://alice@host/e", true },
  /* Query parameters are a set. */
  { "nbd+unix:///e?socket=/x&tls-verify-peer=false",
    "nbd+unix:///e?tls-verify-peer=false&socket=/x", true },
  { "nbd+unix:///?socket=/x&socket=/x", "nbd+unix:///?socket=/x", true },
  { "nbd+unix:///?&socket=/x&", "nbd+unix:///?socket=/x", true },
  { "nbd://host/e?", "nbd://host/e", true },
  { "nbd+unix:///?socket=%2Ftmp%2Fs", "nbd+unix:///?socket=/tmp/s", true },
  { "nbd+unix:///?socket=/a&tls-certificates=/c", "nbd+unix:///?socket=/a",
    false },
  { "nbd+unix:///?socket=/a", "nbd+unix:///?socket=/b", false },
  { "nbd://host/e?a=1", "nbd://host/e?A=1", false },
  { "nbd://host/e?a=1", "nbd://host/e?a=1&a=2", false },
  /* socket= paths meet by realpath when they exist ... */
  { "nbd+unix:///?socket=^/s", "nbd+unix:///?socket=^/./s", true },
  { "nbd+unix:///?socket=^/s", "nbd+unix:///?socket=^/link", true },
  { "nbd+unix:///?socket=^/s", "nbd+unix:///?socket=^/t", false },
  { "nbd+unix:///?socket=^/s", "nbd+unix:///?socket=^/gone", false },
  /* ... but tls-* and other parameters only when equal. */
  { "nbds://h/e?tls-certificates=^/s", "nbds://h/e?tls-certificates=^/./s",
    false },
  { "nbds://h/e?tls-psk-file=^/link", "nbds://h/e?tls-psk-file=^/s", false },
  /* Anything else is only itself. */
  { "/dev/sda", "/dev/sda", true },
  { "/dev/sda", "nbd://host/dev/sda", false },
  { "nbd://[::1/e", "nbd://[::1/e", true },
  { "nbd://[::1/e", "nbd://[::1]/e", false },
  { "nbd://[::1]x/e", "nbd://[::1]/e", false },
};

/* The case's text with "^" made the scratch directory, in a new
 * string. */
static char *
expand (const char *text, const char *dir)
{
  size_t n = strlen (text) + 1, i;
  char *out, *o;

  for (i = 0; text[i]; i++)
    if (text[i] == '^')
      n += strlen (dir);
  out = o = malloc (n);
  if (!out) {
    perror ("malloc");
    exit (EXIT_FAILURE);
  }
  for (i = 0; text[i]; i++)
    if (text[i] == '^')
      o = stpcpy (o, dir);
    else
      *o++ = text[i];
  *o = '\0';
  return out;
}

int
main (void)
{
  char dir[] = "/tmp/test-uri-same.XXXXXX", path[64];
  const char *files[] = { "s", "t" };
  unsigned same = 0;
  size_t i;
  FILE *fp;

  if (!mkdtemp (dir)) {
    perror ("mkdtemp");
    return EXIT_FAILURE;
  }
  for (i = 0; i < ELEMS (files); i++) {
    snprintf (path, sizeof path, "%s/%s", dir, files[i]);
    if (!(fp = fopen (path, "w")) || fclose (fp) != 0) {
      perror (path);
      return EXIT_FAILURE;
    }
  }
  snprintf (path, sizeof path, "%s/link", dir);
  if (symlink ("s", path) == -1) {
    perror (path);
    return EXIT_FAILURE;
  }

  for (i = 0; i < ELEMS (cases); i++) {
    char *a = expand (cases[i].a, dir), *b = expand (cases[i].b, dir);

    if (uri_same (a, b) != cases[i].same)
      fail ("uri_same (\"%s\", \"%s\") says %s", a, b,
            cases[i].same ? "different" : "same");
    if (uri_same (b, a) != cases[i].same)
      fail ("uri_same (\"%s\", \"%s\") says %s", b, a,
            cases[i].same ? "different" : "same");
    if (!uri_same (a, a))
      fail ("uri_same (\"%s\", itself) says different", a);
    same += cases[i].same;
    free (a);
    free (b);
  }

  for (i = 0; i < ELEMS (files); i++) {
    snprintf (path, sizeof path, "%s/%s", dir, files[i]);
    unlink (path);
  }
  snprintf (path, sizeof path, "%s/link", dir);
  unlink (path);
  rmdir (dir);
  if (failures) {
    printf ("test-uri-same: %u failures\n", failures);
    return EXIT_FAILURE;
  }
  printf ("test-uri-same: %u pairs of spellings of one export are the "
          "same, %zu pairs naming different ones are not, both ways "
          "round\n", same, ELEMS (cases) - same);
  return EXIT_SUCCESS;
}
