"""The two peers every nbdraid figure is set beside.

Ceiling: `nbdkit file` serving one sparse file of the array's size on
the same filesystem: what NBD and nbdkit cost with no RAID at all.

Kernel: btrfs with the same profile for data and metadata on loop
devices over member files of the same size on the same filesystem, one
big file on it served by `nbdkit file cache=none`.  cache=none evicts
what was read or written from the page cache, so requests go through
btrfs's RAID code to the loop devices rather than being answered from
btrfs's page cache, which nbdraid does not have either.
"""
import os
import re
import shutil
import time

import command
import servers

# btrfs commands get timeouts: a wedged btrfs (a task stuck holding
# its device lock) hangs every later mkfs and mount, in D state, and
# the benchmark must then go on without the kernel peer.
BTRFS_TIMEOUT_S = 120
REPLACE_TIMEOUT_S = 300
REPLACE_ATTEMPTS = 3


def btrfs_unavailable():
    """Why btrfs on loop devices cannot be used here, or None."""
    if os.geteuid() != 0:
        return "btrfs peer skipped: needs root (losetup, mount)"
    for tool in ("mkfs.btrfs", "btrfs", "losetup", "mount"):
        if not shutil.which(tool):
            return f"btrfs peer skipped: {tool} is not installed"
    if not _kernel_has_btrfs():
        command.run(["modprobe", "btrfs"], quiet=True)
        if not _kernel_has_btrfs():
            return "btrfs peer skipped: the kernel has no btrfs"
    if not os.path.exists("/dev/loop-control"):
        return "btrfs peer skipped: no loop devices (/dev/loop-control)"
    stuck = _stuck_in_btrfs()
    if stuck:
        return (f"btrfs peer skipped: pid {stuck} is stuck in the kernel's "
                "btrfs (D state); btrfs would hang until a reboot")
    return None


def _stuck_in_btrfs():
    """A task in uninterruptible sleep inside btrfs, or None."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{pid}/wchan") as f:
                wchan = f.read()
        except OSError:
            continue
        if state == "D" and "btrfs" in wchan:
            return pid
    return None


def _kernel_has_btrfs():
    with open("/proc/filesystems") as f:
        return any(line.split()[-1] == "btrfs" for line in f if line.strip())


class Ceiling:
    def __init__(self, scope, workdir, size_bytes):
        self.path = os.path.join(workdir, "ceiling.img")
        with open(self.path, "wb") as f:
            f.truncate(size_bytes)
        scope.register(os.unlink, self.path)
        self.server = servers.file(scope, workdir, "ceiling", self.path)
        self.uri = self.server.uri


class Btrfs:
    """btrfs PROFILE over N loop devices of MEMBER_BYTES each, in
    WORKDIR; the served file is SIZE_BYTES (sparse).  DEVICES: the
    caller's own N devices (throttled loop devices, say) to make it
    on instead, which stay the caller's to detach."""

    def __init__(self, scope, workdir, profile, n, member_bytes, size_bytes,
                 devices=None):
        self.scope = scope
        self.dir = os.path.join(workdir, "btrfs")
        os.makedirs(self.dir)
        self.mnt = os.path.join(self.dir, "mnt")
        os.makedirs(self.mnt)
        self.member_bytes = member_bytes
        self.replacements = 0
        self.loops = (list(devices) if devices else
                      [self._loop(os.path.join(self.dir, f"d{i}.img"))
                       for i in range(n)])
        command.run(["mkfs.btrfs", "-q", "-f", "-d", profile, "-m", profile,
                     *self.loops], timeout=BTRFS_TIMEOUT_S)
        self._mount(self.loops[0])
        self.file = os.path.join(self.mnt, "big.img")
        with open(self.file, "wb") as f:
            f.truncate(size_bytes)
        self.server = None
        self.serve()

    def _loop(self, path):
        with open(path, "wb") as f:
            f.truncate(self.member_bytes)
        dev = command.run(["losetup", "-f", "--show", path]).strip()
        self.scope.register(self._detach, dev)
        return dev

    @staticmethod
    def _detach(dev):
        command.run(["losetup", "-d", dev], quiet=True)

    def _mount(self, dev, degraded=False):
        opts = ["-o", "degraded"] if degraded else []
        command.run(["mount", "-t", "btrfs", *opts, dev, self.mnt],
                    timeout=BTRFS_TIMEOUT_S)
        self.scope.register(self._umount)

    def _umount(self):
        if os.path.ismount(self.mnt):
            command.run(["umount", self.mnt], timeout=BTRFS_TIMEOUT_S)

    def serve(self):
        self.server = servers.file(self.scope, self.dir, "btrfs", self.file,
                                   ["cache=none"])
        self.uri = self.server.uri

    def degrade(self, k):
        """Lose the last K devices: stop, unmount, detach their loops,
        mount the rest with -o degraded and serve again.  Returns the
        btrfs devids lost (mkfs numbers devices 1..n in order)."""
        self.server.stop()
        command.run(["sync"])
        self._umount()
        lost = self.loops[-k:]
        for dev in lost:
            self._detach(dev)
        self.loops = self.loops[:-k]
        n = len(self.loops) + k
        self._mount(self.loops[0], degraded=True)
        self.serve()
        return list(range(n - k + 1, n + 1))

    def used_bytes(self, devid):
        """Bytes btrfs has allocated on device DEVID (what a replace
        copies)."""
        out = command.run(["btrfs", "filesystem", "show", "--raw", self.mnt])
        m = re.search(rf"devid\s+{devid}\s+size\s+\d+\s+used\s+(\d+)", out)
        if not m:
            raise RuntimeError(f"btrfs {self.mnt}: no devid {devid} in: {out}")
        return int(m.group(1))

    def replace(self, devid):
        """Rebuild the lost DEVID onto a new loop device; seconds taken."""
        self.replacements += 1
        dev = self._loop(os.path.join(self.dir, f"r{self.replacements}.img"))
        self.loops.append(dev)
        # Straight after a degraded mount, the replace's scrub failed to
        # set a block group read-only (ENOSPC, Linux 6.18) 2 runs in 3;
        # committing the mount's transaction first let it start.  It
        # still failed about one bench run in three (never in three
        # by-hand runs writing the file with dd).  Such a start fails
        # before it copies anything, so trying again after another
        # commit times the same work.
        for attempt in range(1, REPLACE_ATTEMPTS + 1):
            command.run(["btrfs", "filesystem", "sync", self.mnt],
                        timeout=BTRFS_TIMEOUT_S)
            t0 = time.monotonic()
            try:
                command.run(["btrfs", "replace", "start", "-B", "-f",
                             str(devid), dev, self.mnt],
                            timeout=REPLACE_TIMEOUT_S)
                return time.monotonic() - t0
            except command.CommandFailed as e:
                if ("No space left on device" not in str(e)
                        or attempt == REPLACE_ATTEMPTS):
                    raise
                time.sleep(1)
