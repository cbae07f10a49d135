/* nbdraid: members that are local files or block devices. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device-lock.h"
#include "hole-memo.h"
#include "member.h"

/* O_DIRECT needs the buffer, offset and length aligned to the logical
 * block size; 4096 covers every device we meet. */
#define DIRECT_ALIGN 4096

struct file_member {
  int fd;
  bool block_device;
  bool direct;
  int held;                     /* device_lock: -1 none, 0 read, 1 write */
  struct hole_memo known;       /* the last SEEK_DATA answer */
  pthread_mutex_t partial;      /* O_DIRECT: partial blocks, one at a time */
};

/* The file backend's own state of member m. */
static struct file_member *
priv (struct member *m)
{
  return m->priv;
}

/* pread all len bytes, going on after short reads and EINTR.  A read
 * past the end of the member fails with EIO. */
static int
full_pread (int fd, void *buf, size_t len, uint64_t off)
{
  while (len > 0) {
    ssize_t r = pread (fd, buf, len, (off_t) off);
    if (r == -1) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    if (r == 0) {
      errno = EIO;              /* short member: a read past its end */
      return -1;
    }
    buf = (char *) buf + r;
    len -= (size_t) r;
    off += (uint64_t) r;
  }
  return 0;
}

/* pwrite all len bytes, going on after short writes and EINTR. */
static int
full_pwrite (int fd, const void *buf, size_t len, uint64_t off)
{
  while (len > 0) {
    ssize_t r = pwrite (fd, buf, len, (off_t) off);
    if (r == -1) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    buf = (const char *) buf + r;
    len -= (size_t) r;
    off += (uint64_t) r;
  }
  return 0;
}

/* Can an O_DIRECT transfer use buf, len and off as they are (all aligned)? */
static bool
direct_ok (const void *buf, size_t len, uint64_t off)
{
  return ((uintptr_t) buf | len | off) % DIRECT_ALIGN == 0;
}

/* An O_DIRECT transfer that is not aligned goes through an aligned
 * bounce buffer covering the whole blocks it touches. */
static void *
bounce_alloc (size_t len, uint64_t off, uint64_t *b_off, size_t *b_len)
{
  void *b;

  *b_off = off / DIRECT_ALIGN * DIRECT_ALIGN;
  *b_len = (off + len + DIRECT_ALIGN - 1) / DIRECT_ALIGN * DIRECT_ALIGN -
    *b_off;
  if (posix_memalign (&b, DIRECT_ALIGN, *b_len) != 0) {
    errno = ENOMEM;
    return NULL;
  }
  return b;
}

/* The pread op: straight into buf, or through a bounce buffer if
 * O_DIRECT and not aligned. */
static int
file_pread (struct member *m, void *buf, size_t len, uint64_t off)
{
  struct file_member *f = priv (m);
  uint64_t b_off;
  size_t b_len;
  char *b;
  int r;

  if (!f->direct || direct_ok (buf, len, off))
    return full_pread (f->fd, buf, len, off);
  b = bounce_alloc (len, off, &b_off, &b_len);
  if (!b)
    return -1;
  r = full_pread (f->fd, b, b_len, b_off);
  if (r == 0)
    memcpy (buf, b + (off - b_off), len);
  free (b);
  return r;
}

/* Write buf at off, by read-modify-write of whole blocks if O_DIRECT
 * and not aligned.  The caller tells the hole memo. */
static int
write_at (struct member *m, const void *buf, size_t len, uint64_t off)
{
  struct file_member *f = priv (m);
  uint64_t b_off;
  size_t b_len;
  char *b;
  int r;

  if (!f->direct || direct_ok (buf, len, off))
    return full_pwrite (f->fd, buf, len, off);
  /* Read-modify-write of the partial blocks.  Writes that overlap
   * never run at once (stripe and range locks), but two that share a
   * block without overlapping may (RAID0/1/10, range-lock.h), and each
   * would write the other's old bytes back: they take turns. */
  b = bounce_alloc (len, off, &b_off, &b_len);
  if (!b)
    return -1;
  pthread_mutex_lock (&f->partial);
  r = full_pread (f->fd, b, b_len, b_off);
  if (r == 0) {
    memcpy (b + (off - b_off), buf, len);
    r = full_pwrite (f->fd, b, b_len, b_off);
  }
  pthread_mutex_unlock (&f->partial);
  free (b);
  return r;
}

/* The flush op: fdatasync. */
static int
file_flush (struct member *m)
{
  return fdatasync (priv (m)->fd);
}

/* Zero a range by writing zeros, a MiB at a time, where it cannot be
 * zeroed otherwise. */
static int
write_zeros (struct member *m, uint64_t len, uint64_t off)
{
  const size_t zlen = 1024 * 1024;
  void *z;
  int r = 0;

  if (posix_memalign (&z, DIRECT_ALIGN, zlen) != 0) {
    errno = ENOMEM;
    return -1;
  }
  memset (z, 0, zlen);
  while (len > 0 && r == 0) {
    size_t n = len < zlen ? (size_t) len : zlen;
    r = write_at (m, z, n, off);
    len -= n;
    off += n;
  }
  free (z);
  return r;
}

/* Make a range read as zeros: BLKZEROOUT on a block device, a punched
 * hole in a file, else written zeros. */
static int
zero_at (struct member *m, uint64_t len, uint64_t off)
{
  struct file_member *f = priv (m);

  if (f->block_device) {
    uint64_t range[2] = { off, len };
    if ((off | len) % 512 == 0 && ioctl (f->fd, BLKZEROOUT, range) == 0)
      return 0;
    return write_zeros (m, len, off);
  }
  if (fallocate (f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                 (off_t) off, (off_t) len) == 0)
    return 0;
  if (errno != EOPNOTSUPP)
    return -1;
  return write_zeros (m, len, off);
}

/* The pwrite op: write_at, the hole memo told before and after. */
static int
file_pwrite (struct member *m, const void *buf, size_t len, uint64_t off)
{
  hole_memo_changing (&priv (m)->known, off, len);
  return hole_memo_changed (&priv (m)->known, write_at (m, buf, len, off));
}

/* The zero op: zero_at, the hole memo told before and after. */
static int
file_zero (struct member *m, uint64_t len, uint64_t off)
{
  hole_memo_changing (&priv (m)->known, off, len);
  return hole_memo_changed (&priv (m)->known, zero_at (m, len, off));
}

/* SEEK_DATA's answer is kept: it covers the whole hole, and on tmpfs
 * finding the end of a range fallocate reserved walks every page of
 * it, so asking again for each piece would walk it again. */
static int
file_is_hole (struct member *m, uint64_t len, uint64_t off)
{
  struct file_member *f = priv (m);
  struct hole_memo_ticket t;
  uint64_t end;
  off_t data;
  int known;

  if (f->block_device)
    return 0;
  known = hole_memo_recall (&f->known, off, len, &t);
  if (known != -1)
    return known;
  data = lseek (f->fd, (off_t) off, SEEK_DATA);
  if (data == -1 && errno != ENXIO)
    return errno == EINVAL ? 0 : -1;
  end = data == -1 ? m->size_bytes : (uint64_t) data;
  hole_memo_keep (&f->known, &t, off, end, true);
  return end >= off + len;
}

/* The refresh_size op: fstat for a file, BLKGETSIZE64 for a block
 * device, as at open.  The hole memo may hold an answer that ended at
 * the old end: forget it. */
static int
file_refresh_size (struct member *m)
{
  struct file_member *f = priv (m);
  uint64_t size;
  struct stat st;

  if (f->block_device) {
    if (ioctl (f->fd, BLKGETSIZE64, &size) == -1)
      return -1;
  }
  else {
    if (fstat (f->fd, &st) == -1)
      return -1;
    size = (uint64_t) st.st_size;
  }
  __atomic_store_n (&m->size_bytes, size, __ATOMIC_RELEASE);
  hole_memo_forget (&f->known);
  return 0;
}

/* The close op: close the descriptor and free the member. */
static void
file_close (struct member *m)
{
  close (priv (m)->fd);
  if (priv (m)->held != -1)
    device_lock_drop (m->identity, priv (m)->held);
  hole_memo_destroy (&priv (m)->known);
  pthread_mutex_destroy (&priv (m)->partial);
  free (m->priv);
  free (m->name);
  free (m);
}

static const struct member_ops file_ops = {
  .kind = "file",
  .pread = file_pread,
  .pwrite = file_pwrite,
  .flush = file_flush,
  .zero = file_zero,
  .is_hole = file_is_hole,
  .refresh_size = file_refresh_size,
  .close = file_close,
};

/* Open a file or block device as a member: its size, and its identity
 * (to catch one listed twice). */
struct member *
member_file_open (const char *path, const struct member_open_options *opts,
                  char *err, size_t errlen)
{
  int flags = (opts->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC |
    (opts->direct ? O_DIRECT : 0);
  struct member *m = NULL;
  struct file_member *f = NULL;
  struct stat st;
  int fd;

  fd = open (path, flags);
  if (fd == -1) {
    snprintf (err, errlen, "%s: open: %s", path, strerror (errno));
    return NULL;
  }
  if (fstat (fd, &st) == -1) {
    snprintf (err, errlen, "%s: fstat: %s", path, strerror (errno));
    goto fail;
  }
  m = calloc (1, sizeof *m);
  f = calloc (1, sizeof *f);
  if (!m || !f || !(m->name = strdup (path))) {
    snprintf (err, errlen, "%s: %s", path, strerror (ENOMEM));
    goto fail;
  }
  if (S_ISREG (st.st_mode)) {
    m->size_bytes = (uint64_t) st.st_size;
    m->identity[0] = st.st_dev;
    m->identity[1] = st.st_ino;
  }
  else if (S_ISBLK (st.st_mode)) {
    f->block_device = true;
    m->identity[1] = st.st_rdev;
    if (ioctl (fd, BLKGETSIZE64, &m->size_bytes) == -1) {
      snprintf (err, errlen, "%s: BLKGETSIZE64: %s", path, strerror (errno));
      goto fail;
    }
  }
  else {
    snprintf (err, errlen, "%s: %s", path, S_ISDIR (st.st_mode)
              ? "is a directory" : "is not a regular file or block device");
    goto fail;
  }
  f->held = -1;
  if (!opts->unlocked) {
    if (device_lock_take (path, fd, m->identity, f->block_device,
                          !opts->readonly, err, errlen) == -1)
      goto fail;
    f->held = !opts->readonly;
  }
  f->fd = fd;
  f->direct = opts->direct;
  hole_memo_init (&f->known);
  pthread_mutex_init (&f->partial, NULL);
  m->waits = opts->direct;
  m->ops = &file_ops;
  m->priv = f;
  return m;

 fail:
  if (m)
    free (m->name);
  free (m);
  free (f);
  close (fd);
  return NULL;
}
