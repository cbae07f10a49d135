/* nbdraid: one interface for a member's I/O, whatever backs it.
 *
 * Every operation returns 0, or -1 with errno set; callers add the
 * member, operation and offset to the message.  Offsets are absolute
 * byte offsets on the member (the superblock lives at 4096).
 */
#ifndef NBDRAID_MEMBER_H
#define NBDRAID_MEMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct member;

struct member_ops {
  const char *kind;             /* "file", "block device", "nbd" */
  int (*pread) (struct member *m, void *buf, size_t len, uint64_t off);
  int (*pwrite) (struct member *m, const void *buf, size_t len,
                 uint64_t off);
  int (*flush) (struct member *m);
  /* pread and pwrite that give up after timeout_ms, where a backend can
   * bound its wait (NBD; NULL elsewhere): the heartbeat's, so that a
   * member that hangs holds up its own beat only that long, not the
   * beats to every other member for the whole request timeout. */
  int (*pread_within) (struct member *m, void *buf, size_t len, uint64_t off,
                       unsigned timeout_ms);
  int (*pwrite_within) (struct member *m, const void *buf, size_t len,
                        uint64_t off, unsigned timeout_ms);
  /* From now on give up every operation after timeout_ms at most, and
   * connect again only once: the server is stopping, and a member whose server
   * went away (each operation retried for the whole request timeout) must not
   * hold the stop up past a service manager's patience.  NULL where waits
   * cannot be bounded. */
  void (*hurry) (struct member *m, unsigned timeout_ms);
  /* Make the range read back as zeros, deallocating it when the
   * backend can. */
  int (*zero) (struct member *m, uint64_t len, uint64_t off);
  /* 1 if the range is known to read as zeros without reading it
   * (a hole), 0 if it may hold data, -1 on error. */
  int (*is_hole) (struct member *m, uint64_t len, uint64_t off);
  /* Read the size again into size_bytes (a file or block device that
   * grew); NULL where the size is fixed at open (an NBD export's is
   * what the handshake said).  0, or -1 with errno set. */
  int (*refresh_size) (struct member *m);
  void (*close) (struct member *m);
};

struct member {
  const struct member_ops *ops;
  char *name;                   /* path or URI, for messages */
  uint64_t size_bytes;
  /* What the member is underneath, to catch one disk listed twice under
   * two names: (st_dev, st_ino) of a file, (0, st_rdev) of a block
   * device; zeros when unknown. */
  uint64_t identity[2];
  /* How long an operation takes, on average lately (ns): the array
   * runs quick ones in the caller instead of handing them to threads. */
  uint64_t service_ns;
  /* How long a read that succeeded takes, on average lately (ns; 0
   * before the first): the copies family reads the faster copies.
   * Apart from service_ns, which writes and flushes move too (a
   * local file's fdatasync can take longer than a remote read). */
  uint64_t read_ns;
  /* Operations the array has running on it now (atomic). */
  unsigned ops_in_flight;
  /* Its I/O waits on a device or the network (O_DIRECT, NBD) rather
   * than copying memory: operations overlap however quick they are. */
  bool waits;
  void *priv;
};

struct member_open_options {
  bool readonly;
  bool direct;                  /* O_DIRECT for files and block devices */
  /* Files and block devices are held while open (device-lock.h):
   * exclusively when written, shared when read, unless unlocked (to
   * examine a device whatever holds it). */
  bool unlocked;
  unsigned nbd_connections;     /* NBD members: connections to open */
  unsigned nbd_timeout_s;       /* NBD members: request timeout */
  unsigned connect_timeout_s;   /* NBD members: connect timeout */
  /* NBD members: a request on a connection that broke is not tried
   * again on another (md's failfast: fail it rather than wait). */
  bool failfast;
  /* Nested arrays: the layer above opens "array:NAME" members, since
   * an array sits above the member layer.  NULL where there are none. */
  struct member *(*open_nested) (void *ctx, const char *spec,
                                 const char *name, char *err,
                                 size_t errlen);
  void *nested_ctx;
};

struct raid_config;
/* How cfg says its members are opened. */
void member_options_from_config (const struct raid_config *cfg,
                                 bool readonly,
                                 struct member_open_options *mo);

/* Open a member by its config spec (a path or an NBD URI).
 * Returns NULL with a one-line reason (naming the member) in err. */
struct member *member_open (const char *spec,
                            const struct member_open_options *opts,
                            char *err, size_t errlen);
void member_close (struct member *m);

/* Read m's size again (nbdraid grow): 0, or -1 with the reason, naming
 * m, in err.  *fixed says the backend cannot (an NBD export's size is
 * the one it had at connect), and size_bytes stays as it was. */
int member_refresh_size (struct member *m, bool *fixed, char *err,
                         size_t errlen);

/* Is path (by any name: a symlink, /dev/disk/by-id/...) the file or
 * device m is? */
bool member_is (const struct member *m, const char *path);

/* Is path the file or device of that identity (struct member's)?
 * False for an identity of zeros (unknown). */
bool member_identity_is (const uint64_t identity[2], const char *path);

/* Among members[0..n-1] (NULL entries skipped), find two that are the
 * same file or device.  Returns true and sets *a < *b if so. */
bool member_find_duplicate (struct member *const *members, unsigned n,
                            unsigned *a, unsigned *b);

/* Backends. */
struct member *member_file_open (const char *path,
                                 const struct member_open_options *opts,
                                 char *err, size_t errlen);
struct member *member_nbd_open (const char *uri,
                                const struct member_open_options *opts,
                                char *err, size_t errlen);

#endif
