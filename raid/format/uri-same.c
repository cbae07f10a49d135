/* nbdraid: do two NBD URIs name the same export, however spelt?
 *
 * The spelling rules are RFC 3986's (scheme and host are
 * case-insensitive, %XX stands for its byte) and the NBD URI
 * specification's (NetworkBlockDevice/nbd doc/uri.md: port 10809 when
 * none is given, the export name is the path after its leading '/',
 * and the query parameters are named, not ordered).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "uri-same.h"

/* IANA's port for NBD, which a URI without a port means. */
#define NBD_PORT 10809

/* A piece of a URI, as written. */
struct span {
  const char *p;
  size_t n;
};

/* scheme://[userinfo@]host[:port][path][?query][#fragment] */
struct uri {
  struct span scheme, userinfo, host, port, path, query, fragment;
};

/* The text from `from` up to `to`. */
static struct span
between (const char *from, const char *to)
{
  return (struct span) { from, (size_t) (to - from) };
}

/* Split s into its pieces; false if it is not scheme://... or a
 * bracketed (IPv6) host is not closed. */
static bool
split (const char *s, struct uri *u)
{
  const char *sep = strstr (s, "://"), *end, *at, *host_end;

  if (!sep || sep == s)
    return false;
  u->scheme = between (s, sep);
  s = sep + 3;
  end = s + strcspn (s, "/?#");
  at = memchr (s, '@', (size_t) (end - s));
  u->userinfo = at ? between (s, at) : between (s, s);
  if (at)
    s = at + 1;
  if (*s == '[') {
    host_end = memchr (s, ']', (size_t) (end - s));
    if (!host_end || (host_end + 1 < end && host_end[1] != ':'))
      return false;
    host_end++;
  }
  else {
    host_end = memchr (s, ':', (size_t) (end - s));
    if (!host_end)
      host_end = end;
  }
  u->host = between (s, host_end);
  u->port = host_end < end ? between (host_end + 1, end) : between (end, end);
  s = end;
  u->path = between (s, s + strcspn (s, "?#"));
  s += u->path.n;
  if (*s == '?')
    s++;
  u->query = between (s, s + strcspn (s, "#"));
  s += u->query.n;
  if (*s == '#')
    s++;
  u->fragment = between (s, s + strlen (s));
  return true;
}

/* The port a URI's port piece says (none: NBD's), or -1 for one that
 * is not a port number. */
static long
port_of (struct span port)
{
  long n = 0;
  size_t i;

  if (port.n == 0)
    return NBD_PORT;
  for (i = 0; i < port.n; i++) {
    if (port.p[i] < '0' || port.p[i] > '9')
      return -1;
    n = n * 10 + (port.p[i] - '0');
    if (n > 65535)
      return -1;
  }
  return n;
}

static int
hex_digit (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* The bytes a piece stands for, its %XX escapes decoded, in a new
 * string; NULL without memory, or for an escape that is not two hex
 * digits or that stands for NUL (no name or path holds one). */
static char *
decode (struct span s)
{
  char *out = malloc (s.n + 1), *o = out;
  size_t i;
  int hi, lo;

  if (!out)
    return NULL;
  for (i = 0; i < s.n; i++) {
    if (s.p[i] != '%') {
      *o++ = s.p[i];
      continue;
    }
    hi = i + 2 < s.n ? hex_digit (s.p[i + 1]) : -1;
    lo = i + 2 < s.n ? hex_digit (s.p[i + 2]) : -1;
    if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
      free (out);
      return NULL;
    }
    *o++ = (char) (hi * 16 + lo);
    i += 2;
  }
  *o = '\0';
  return out;
}

/* Do two pieces stand for the same bytes?  Not if either cannot be
 * decoded. */
static bool
same_decoded (struct span a, struct span b)
{
  char *da = decode (a), *db = decode (b);
  bool same = da && db && strcmp (da, db) == 0;

  free (da);
  free (db);
  return same;
}

static bool
same_nocase (struct span a, struct span b)
{
  return a.n == b.n && strncasecmp (a.p, b.p, a.n) == 0;
}

/* The export name a path spells: all of it after its leading '/'. */
static struct span
export_of (struct span path)
{
  return path.n > 0 && path.p[0] == '/'
    ? between (path.p + 1, path.p + path.n) : path;
}

/* Do two socket paths lead to the same socket?  Only when both exist
 * (realpath follows them). */
static bool
same_socket (const char *a, const char *b)
{
  char *ra = realpath (a, NULL), *rb = realpath (b, NULL);
  bool same = ra && rb && strcmp (ra, rb) == 0;

  free (ra);
  free (rb);
  return same;
}

/* Do two query parameters ("key=value") say the same? */
static bool
same_param (struct span x, struct span y)
{
  const char *ex = memchr (x.p, '=', x.n), *ey = memchr (y.p, '=', y.n);
  const char *xend = x.p + x.n, *yend = y.p + y.n;
  char *kx = decode (between (x.p, ex ? ex : xend));
  char *ky = decode (between (y.p, ey ? ey : yend));
  char *vx = decode (ex ? between (ex + 1, xend) : between (xend, xend));
  char *vy = decode (ey ? between (ey + 1, yend) : between (yend, yend));
  bool same = kx && ky && vx && vy && strcmp (kx, ky) == 0 &&
    (strcmp (vx, vy) == 0 ||
     (strcmp (kx, "socket") == 0 && same_socket (vx, vy)));

  free (kx);
  free (ky);
  free (vx);
  free (vy);
  return same;
}

/* Take the next parameter of a query off *rest (the '&'-separated
 * pieces, empty ones skipped); false when there is none. */
static bool
next_param (struct span *rest, struct span *param)
{
  while (rest->n > 0) {
    const char *amp = memchr (rest->p, '&', rest->n);
    const char *end = amp ? amp : rest->p + rest->n;

    *param = between (rest->p, end);
    *rest = amp ? between (amp + 1, rest->p + rest->n) : between (end, end);
    if (param->n > 0)
      return true;
  }
  return false;
}

/* Is every parameter of query q in query r too? */
static bool
params_within (struct span q, struct span r)
{
  struct span x, y, rest;
  bool found;

  while (next_param (&q, &x)) {
    found = false;
    rest = r;
    while (!found && next_param (&rest, &y))
      found = same_param (x, y);
    if (!found)
      return false;
  }
  return true;
}

bool
uri_same (const char *a, const char *b)
{
  struct uri x, y;
  long port;

  if (strcmp (a, b) == 0)
    return true;
  if (!split (a, &x) || !split (b, &y))
    return false;
  port = port_of (x.port);
  return same_nocase (x.scheme, y.scheme) &&
    same_decoded (x.userinfo, y.userinfo) &&
    same_nocase (x.host, y.host) &&
    port >= 0 && port == port_of (y.port) &&
    same_decoded (export_of (x.path), export_of (y.path)) &&
    params_within (x.query, y.query) && params_within (y.query, x.query) &&
    same_decoded (x.fragment, y.fragment);
}
