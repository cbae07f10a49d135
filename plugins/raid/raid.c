/* nbdkit-raid-plugin: serve md-compatible RAID arrays over NBD.
 *
 *   nbdkit raid /etc/nbdraid/media.conf
 *   nbdkit raid dir=/etc/nbdraid
 *
 * The engine (raid/) does the work; this file maps nbdkit's callbacks
 * onto it, for the array each connection asked for (arrays.c).  An
 * array's state is shared by its connections, so flush on one makes
 * every connection's writes durable (can_multi_conn).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "arrays.h"
#include "notice.h"
#include "raid.h"
#include "server-readonly.h"
#include "spare-groups.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

static bool readonly;
static bool degraded;
static bool start_dirty_degraded;
static bool force;
static uint64_t degraded_after_s;

/* The array of a connection's handle. */
static struct raid_array *
A (void *handle)
{
  return ((struct served *) handle)->array;
}

/* Stripe buffers are a few hundred KiB to a few MiB per request: keep
 * them in malloc's arenas rather than mapping and unmapping (and
 * faulting in) fresh pages for every request. */
static void
plugin_load (void)
{
  mallopt (M_MMAP_THRESHOLD, 64 * 1024 * 1024);
  mallopt (M_TRIM_THRESHOLD, 128 * 1024 * 1024);
}

/* Stop the control planes, then stop the arrays cleanly and free
 * them. */
static void
plugin_unload (void)
{
  arrays_free ();
}

/* Called for each key=value passed on the command line: config=FILE
 * (the magic key) and dir=DIR, as often as wanted; readonly=,
 * degraded=, degraded-after= and force=. */
static int
plugin_config (const char *key, const char *value)
{
  if (strcmp (key, "config") == 0)
    return arrays_add_config (value);
  else if (strcmp (key, "dir") == 0)
    return arrays_add_dir (value);
  else if (strcmp (key, "degraded-after") == 0) {
    if (raid_parse_duration (value, &degraded_after_s) == -1) {
      nbdkit_error ("degraded-after=%s: not a duration (30s, 5m, ...)",
                    value);
      return -1;
    }
  }
  else if (strcmp (key, "start-dirty-degraded") == 0) {
    int r = nbdkit_parse_bool (value);
    if (r == -1)
      return -1;
    start_dirty_degraded = r;
  }
  else if (strcmp (key, "readonly") == 0 || strcmp (key, "degraded") == 0 ||
           strcmp (key, "force") == 0) {
    int r = nbdkit_parse_bool (value);
    if (r == -1)
      return -1;
    *(key[0] == 'r' ? &readonly : key[0] == 'd' ? &degraded : &force) = r;
  }
  else {
    nbdkit_error ("unknown parameter '%s' (expected config=FILE, dir=DIR, "
                  "readonly=BOOL, degraded=BOOL, degraded-after=DURATION, "
                  "force=BOOL or start-dirty-degraded=BOOL)",
                  key);
    return -1;
  }
  return 0;
}

/* Check that a config file was given, and load them. */
static int
plugin_config_complete (void)
{
  return arrays_load ();
}

#define plugin_config_help                                                     \
  "[config=]FILE      The array's config file (again for more arrays).\n"      \
  "dir=DIR            Serve every DIR/*.conf, each as its array's export.\n"   \
  "readonly=true      Open the members read-only.\n"                           \
  "degraded=true      Start even with members missing (mdadm --run).\n"        \
  "degraded-after=D   Wait D for missing members, then start degraded.\n"      \
  "force=true         Take the arrays from another server at once\n"           \
  "                   (its host fenced), not after its heartbeat stops.\n"     \
  "start-dirty-degraded=true  Start a RAID5/6 both dirty and degraded\n"       \
  "                   without a partial parity log (the write hole)."

/* Errors as nbdkit's errors; routine events and warnings are not
 * errors (notice.c). */
static void
log_to_nbdkit (void *opaque, enum raid_log_level level, const char *msg)
{
  switch (level) {
  case RAID_LOG_ERROR:
    notice_error (msg);
    break;
  case RAID_LOG_WARNING:
    notice ("warning", msg);
    break;
  case RAID_LOG_INFO:
    notice ("info", msg);
    break;
  default:
    nbdkit_debug ("%s", msg);
  }
}

/* nbdraid stop (as mdadm --stop): end nbdkit, which unloads the plugin
 * and so stops the array cleanly.  Not under connected clients unless
 * forced, as md will not stop an array in use; nbdkit then exits when
 * the last client has gone. */
static int
stop_server (bool force, char *err, size_t errlen)
{
  unsigned n = arrays_connections ();
  char names[1024];

  if (n && !force) {
    arrays_names (names, sizeof names);
    snprintf (err, errlen, "%s %s %s %u client%s connected; with "
              "--force it stops once %s gone", strchr (names, ',')
              ? "arrays" : "array", names, strchr (names, ',')
              ? "have" : "has", n, n == 1 ? "" : "s",
              n == 1 ? "it has" : "they have");
    return -1;
  }
  nbdkit_shutdown ();
  return 0;
}

static const struct control_server server = {
  .stop = stop_server, .reload = arrays_reload, .tick = spare_groups_tick,
};

/* Assemble before nbdkit forks, so errors reach the admin's terminal. */
static int
plugin_get_ready (void)
{
  struct raid_options opts = { .readonly = readonly,
                               .degraded = degraded,
                               .force = force,
                               .start_dirty_degraded = start_dirty_degraded,
                               .log = log_to_nbdkit };

  notice_start ();
  /* With nbdkit -r nothing may write, metadata and rebuilds included. */
  if (!readonly && server_readonly ()) {
    nbdkit_debug ("nbdkit -r: the arrays are read-only");
    opts.readonly = readonly = true;
  }
  return arrays_assemble (&opts, degraded_after_s, &server);
}

/* Threads only after the fork: member I/O, and the control planes. */
static int
plugin_after_fork (void)
{
  return arrays_start ();
}

/* The export name picks the array: "" the only one, when there is one. */
static int
plugin_list_exports (int ro, int is_tls, struct nbdkit_exports *exports)
{
  return arrays_list (exports);
}

static const char *
plugin_default_export (int ro, int is_tls)
{
  return arrays_default ();
}

/* A connection's handle is the array it asked for. */
static void *
plugin_open (int ro)
{
  struct served *s = arrays_find (nbdkit_export_name ());

  if (s)
    __atomic_add_fetch (&s->connections, 1, __ATOMIC_RELAXED);
  return s;
}

/* A client went. */
static void
plugin_close (void *handle)
{
  struct served *s = handle;

  __atomic_sub_fetch (&s->connections, 1, __ATOMIC_RELAXED);
}


/* Get the size of the array. */
static int64_t
plugin_get_size (void *handle)
{
  return (int64_t) raid_size (A (handle));
}

/* Writable unless readonly=true, nbdkit -r or nbdraid readonly (asked
 * at each connection: one made before nbdraid readonly keeps writing,
 * and its writes fail with EROFS). */
static int
plugin_can_write (void *handle)
{
  return !raid_readonly (A (handle));
}

/* Allow multiple parallel connections from a single client: all state
 * is global, so a flush on one covers them all. */
static int
plugin_can_multi_conn (void *handle)
{
  return 1;
}

/* FUA is native: the array flushes its members before returning. */
static int
plugin_can_fua (void *handle)
{
  return NBDKIT_FUA_NATIVE;
}

/* Flush is supported: it flushes every member that holds data. */
static int
plugin_can_flush (void *handle)
{
  return 1;
}

/* Trim zeroes the range, so only when writable. */
static int
plugin_can_trim (void *handle)
{
  return !raid_readonly (A (handle));
}

/* Zero when writable: whole stripes are deallocated on every member. */
static int
plugin_can_zero (void *handle)
{
  return !raid_readonly (A (handle));
}

/* Extents: holes where the members report them. */
static int
plugin_can_extents (void *handle)
{
  return 1;
}

/* Preferred = a full stripe (no read-modify-write), when nbdkit can
 * express it: it must be a power of two no larger than 32M. */
static int
plugin_block_size (void *handle, uint32_t *minimum, uint32_t *preferred,
                 uint32_t *maximum)
{
  struct raid_shape shape;
  uint64_t stripe, pref;

  raid_get_shape (A (handle), &shape);
  stripe = shape.stripe_bytes;
  pref = (stripe & (stripe - 1)) == 0 ? stripe : shape.unit_bytes;

  *minimum = 1;
  *preferred = pref < 512 ? 512 : pref > 32 * 1024 * 1024
    ? 32 * 1024 * 1024 : (uint32_t) pref;
  *maximum = 0xffffffff;
  return 0;
}

/* The engine logs the detail (member, offset); pass errno through. */
static int
engine_result (int r)
{
  if (r == -1)
    nbdkit_set_error (errno);
  return r;
}

/* Read data from the array. */
static int
plugin_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
            uint32_t flags)
{
  return engine_result (raid_read (A (handle), buf, count, offset));
}

/* Write data to the array. */
static int
plugin_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
             uint32_t flags)
{
  return engine_result (raid_write (A (handle), buf, count, offset,
                                    flags & NBDKIT_FLAG_FUA));
}

/* Flush the array's members to disk. */
static int
plugin_flush (void *handle, uint32_t flags)
{
  return engine_result (raid_flush (A (handle)));
}

/* Trim by zeroing, which keeps parity and copies consistent; whole
 * stripes are deallocated. */
static int
plugin_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  return engine_result (raid_zero (A (handle), count, offset,
                                   flags & NBDKIT_FLAG_FUA));
}

/* Write zeroes to the array; whole stripes are deallocated. */
static int
plugin_zero (void *handle, uint32_t count, uint64_t offset,
                 uint32_t flags)
{
  return engine_result (raid_zero (A (handle), count, offset,
                                   flags & NBDKIT_FLAG_FUA));
}

/* raid_extents callback: add a hole, reading as zeros, or data. */
static int
add_extent (void *opaque, uint64_t offset, uint64_t len, bool hole)
{
  return nbdkit_add_extent (opaque, offset, len,
                            hole ? NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO
                            : 0);
}

/* Extents: which ranges of the array are holes. */
static int
plugin_extents (void *handle, uint32_t count, uint64_t offset,
                 uint32_t flags, struct nbdkit_extents *extents)
{
  return engine_result (raid_extents (A (handle), count, offset, add_extent,
                                      extents));
}

static struct nbdkit_plugin plugin = {
  .name = "raid",
  .longname = "nbdkit md-compatible RAID plugin",
  .version = PACKAGE_VERSION,
  .magic_config_key = "config",
  .load = plugin_load,
  .unload = plugin_unload,
  .config = plugin_config,
  .config_complete = plugin_config_complete,
  .config_help = plugin_config_help,
  .get_ready = plugin_get_ready,
  .after_fork = plugin_after_fork,
  .list_exports = plugin_list_exports,
  .default_export = plugin_default_export,
  .open = plugin_open,
  .close = plugin_close,
  .get_size = plugin_get_size,
  .block_size = plugin_block_size,
  .can_write = plugin_can_write,
  .can_multi_conn = plugin_can_multi_conn,
  .can_fua = plugin_can_fua,
  .can_flush = plugin_can_flush,
  .can_trim = plugin_can_trim,
  .can_zero = plugin_can_zero,
  .can_extents = plugin_can_extents,
  .pread = plugin_pread,
  .pwrite = plugin_pwrite,
  .flush = plugin_flush,
  .trim = plugin_trim,
  .zero = plugin_zero,
  .extents = plugin_extents,
  .errno_is_preserved = 0,
};

NBDKIT_REGISTER_PLUGIN (plugin)
