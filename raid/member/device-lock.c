/* nbdraid: local devices held against other processes (device-lock.h). */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "device-lock.h"

/* One device this process holds, and how many opens hold it. */
struct held {
  uint64_t id[2];
  /* Carries the flock: a duplicate of the first opener's descriptor,
   * so the lock (which belongs to the open file) outlives that one. */
  int fd;
  int excl_fd;                  /* block devices being written: O_EXCL */
  unsigned writers, readers;
  struct held *next;
};

static struct held *held;
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

static struct held *
find (const uint64_t id[2])
{
  struct held *h;

  for (h = held; h; h = h->next)
    if (h->id[0] == id[0] && h->id[1] == id[1])
      return h;
  return NULL;
}

/* Take the hold a first writer needs: LOCK_EX (converted from the
 * readers' LOCK_SH), and O_EXCL on a block device. */
static int
hold_for_writing (struct held *h, const char *path, bool block, char *err,
                  size_t errlen)
{
  /* As the member's own descriptor opens it: O_DIRECT members are
   * never open buffered. */
  int direct = fcntl (h->fd, F_GETFL) & O_DIRECT;

  if (flock (h->fd, LOCK_EX | LOCK_NB) == -1) {
    snprintf (err, errlen, "%s: %s", path, errno == EWOULDBLOCK
              ? "in use by a running array (another process holds it: "
              "a second nbdkit raid, nbdraid create)" : strerror (errno));
    if (h->readers)
      flock (h->fd, LOCK_SH | LOCK_NB);
    return -1;
  }
  if (block) {
    h->excl_fd = open (path, O_RDONLY | O_EXCL | O_CLOEXEC | direct);
    if (h->excl_fd == -1) {
      snprintf (err, errlen, "%s: %s", path, errno == EBUSY
                ? "in use by the kernel (an md array, a mount, a device "
                "mapper)" : strerror (errno));
      flock (h->fd, h->readers ? LOCK_SH | LOCK_NB : LOCK_UN);
      return -1;
    }
  }
  return 0;
}

int
device_lock_take (const char *path, int fd, const uint64_t id[2],
                  bool block, bool write, char *err, size_t errlen)
{
  struct held *h;
  bool fresh = false;
  int r = 0;

  pthread_mutex_lock (&held_lock);
  h = find (id);
  if (!h) {
    h = calloc (1, sizeof *h);
    if (!h || (h->fd = fcntl (fd, F_DUPFD_CLOEXEC, 0)) == -1) {
      snprintf (err, errlen, "%s: %s", path, strerror (h ? errno : ENOMEM));
      free (h);
      r = -1;
      goto out;
    }
    h->id[0] = id[0];
    h->id[1] = id[1];
    h->excl_fd = -1;
    fresh = true;
  }
  if (write && h->writers == 0)
    r = hold_for_writing (h, path, block, err, errlen);
  else if (fresh && flock (h->fd, LOCK_SH | LOCK_NB) == -1) {
    snprintf (err, errlen, "%s: %s", path, errno == EWOULDBLOCK
              ? "in use by another process changing it (nbdraid create, "
              "zero-superblock)" : strerror (errno));
    r = -1;
  }
  if (r == 0) {
    *(write ? &h->writers : &h->readers) += 1;
    if (fresh) {
      h->next = held;
      held = h;
    }
  }
  else if (fresh) {
    close (h->fd);
    free (h);
  }
 out:
  pthread_mutex_unlock (&held_lock);
  return r;
}

void
device_lock_drop (const uint64_t id[2], bool write)
{
  struct held *h, **p;

  pthread_mutex_lock (&held_lock);
  h = find (id);
  if (h) {
    *(write ? &h->writers : &h->readers) -= 1;
    if (write && h->writers == 0) {
      if (h->excl_fd != -1)
        close (h->excl_fd);
      h->excl_fd = -1;
      if (h->readers)
        flock (h->fd, LOCK_SH | LOCK_NB);
    }
    if (h->writers == 0 && h->readers == 0) {
      for (p = &held; *p != h; p = &(*p)->next)
        ;
      *p = h->next;
      flock (h->fd, LOCK_UN);   /* its opener's descriptor may live on */
      close (h->fd);
      free (h);
    }
  }
  pthread_mutex_unlock (&held_lock);
}
