/* nbdraid: local files and block devices held against other processes
 * while an array uses them, as md claims its devices.
 *
 * An array that writes a device holds it exclusively: a second server,
 * nbdraid create or zero-superblock elsewhere cannot open it to write
 * (flock LOCK_EX; and O_EXCL on block devices, which the kernel also
 * refuses while md or a mount holds the device).  An array opened
 * read-only holds it shared, so it is not wiped under it.  Opens of
 * one device within this process share one lock, taken by the first
 * and let go by the last: flock locks belong to an open file, and two
 * of our own would refuse each other.
 */
#ifndef NBDRAID_DEVICE_LOCK_H
#define NBDRAID_DEVICE_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Hold the device path, open as fd (of identity id, a block device or
 * not), for writing or reading.  0, or -1 with "PATH: why" in err. */
int device_lock_take (const char *path, int fd, const uint64_t id[2],
                      bool block, bool write, char *err, size_t errlen);
/* Let go of one hold device_lock_take gave. */
void device_lock_drop (const uint64_t id[2], bool write);

#endif
