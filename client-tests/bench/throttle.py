"""Loop devices that behave like disks of a known limit, and a watch
on whether what ran on them kept to it.

Each device is a loop device over a sparse file in the scratch
directory, capped by the cgroup v1 block I/O controller's throttle:
rules in the ROOT blkio cgroup (blkio.throttle.{read,write}_{bps,iops}
_device).  A rule in a child cgroup caps only the tasks in that
cgroup, and I/O that kernel threads submit (the flusher's kworkers,
btrfs's workers, which all live in the root cgroup) would pass it by;
a rule in the root cgroup caps every bio that enters the device from
the root cgroup, and here every process is in it.  Whether it holds
is not taken on trust: Watch samples each device's
/sys/block/NAME/stat while a job runs and reports the most it moved in
any second.

blk-throttle counts bios, before the block layer merges them into
requests: a writer that submits 4K bios (a block device's own page
cache writes back a buffer head at a time) gets 500 x 4K = 2 MB/s
where a disk would merge them, and btrfs's 64K bios held it to 32 MB/s
a member on sequential jobs.  A disk's IOPS bound its seeks, not its
streams: the IOPS rules are set for random jobs only (Loops.apply),
sequential ones run under the bandwidth rules alone.
"""
import os
import shutil
import threading
import time
from dataclasses import dataclass

import command

BLKIO = "/sys/fs/cgroup/blkio"
RULES = ("read_bps", "write_bps", "read_iops", "write_iops")
# Sampling: every SAMPLE_S, the peak taken over WINDOW_S.  The
# counters count completions: a loop worker that stalls for a core
# and then catches up completes a second's bios plus the stall's in
# one window (553 IOPS under a 500 rule, load average 13 on 2 cores),
# and blk-throttle may let a slice through early.  SLACK covers both;
# I/O that bypasses the throttle moves at memory speed (159 MB/s a
# member for btrfs raid6 past rules on a child cgroup).
SAMPLE_S = 0.1
WINDOW_S = 1.0
SLACK = 1.25
SECTOR = 512


@dataclass(frozen=True)
class Limit:
    mb_per_s: int               # 10^6 bytes a second, each way
    iops: int = 0               # bios a second, each way (0: no cap)

    def rule(self, name):
        return (self.mb_per_s * 10**6 if name.endswith("bps")
                else self.iops)


def unavailable():
    """Why throttled loop devices cannot be made here, or None."""
    if os.geteuid() != 0:
        return "loop profile skipped: needs root (losetup, blkio rules)"
    if not shutil.which("losetup"):
        return "loop profile skipped: losetup is not installed"
    if not os.path.exists("/dev/loop-control"):
        return "loop profile skipped: no loop devices (/dev/loop-control)"
    for name in RULES:
        path = f"{BLKIO}/blkio.throttle.{name}_device"
        if not os.path.exists(path):
            return (f"loop profile skipped: no {path} (needs the cgroup v1 "
                    "blkio controller)")
    return None


class Loops:
    """N loop devices over sparse files of MEMBER_BYTES in WORKDIR,
    each throttled to LIMIT until SCOPE ends (the rules go first,
    then the devices)."""

    def __init__(self, scope, workdir, n, member_bytes, limit):
        self.limit = limit
        self.devices = []
        self.majmins = []
        _clear_stale()
        for i in range(n):
            path = os.path.join(workdir, f"loop{i}.img")
            with open(path, "wb") as f:
                f.truncate(member_bytes)
            dev = command.run(["losetup", "-f", "--show", path]).strip()
            scope.register(_detach, dev)
            self.devices.append(dev)
            majmin = _majmin(dev)
            self.majmins.append(majmin)
            # Registered before the first rule is written, so that a
            # failure halfway leaves no rule behind either.
            scope.register(_unthrottle, majmin)
        self.apply(limit)

    def apply(self, limit):
        """Cap every device at LIMIT from now on."""
        self.limit = limit
        for dev, majmin in zip(self.devices, self.majmins):
            for name in RULES:
                _write_rule(name, f"{majmin} {limit.rule(name)}")
            _check_rules(dev, majmin, limit)


def _clear_stale():
    """Remove the rules of loop devices that back nothing: a run killed
    by SIGKILL leaves its rules behind, and the next `losetup -f` would
    hand out a device capped at 40 MB/s to whoever asked.  A device
    still attached may be another run's, and keeps its rules."""
    for name in RULES:
        with open(f"{BLKIO}/blkio.throttle.{name}_device") as f:
            majmins = [line.split()[0] for line in f if line.strip()]
        for majmin in majmins:
            dev = os.path.basename(
                os.path.realpath(f"/sys/dev/block/{majmin}"))
            if (dev.startswith("loop") and not os.path.exists(
                    f"/sys/block/{dev}/loop/backing_file")):
                _write_rule(name, f"{majmin} 0")


def _majmin(dev):
    with open(f"/sys/block/{os.path.basename(dev)}/dev") as f:
        return f.read().strip()


def _write_rule(name, text):
    path = f"{BLKIO}/blkio.throttle.{name}_device"
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        raise RuntimeError(f"{path}: writing '{text}': {e.strerror}") from e


def _check_rules(dev, majmin, limit):
    for name in RULES:
        path = f"{BLKIO}/blkio.throttle.{name}_device"
        with open(path) as f:
            rules = dict(line.split() for line in f if line.strip())
        # A rule of 0 is no rule: the file no longer lists the device.
        if rules.get(majmin, "0") != str(limit.rule(name)):
            raise RuntimeError(f"{dev} ({majmin}): {path} holds "
                               f"{rules.get(majmin)} after writing "
                               f"{limit.rule(name)}")


def _unthrottle(majmin):
    # "MAJ:MIN 0" removes the rule.
    for name in RULES:
        _write_rule(name, f"{majmin} 0")


def _detach(dev):
    command.run(["losetup", "-d", dev], quiet=True)


def _counters(dev, majmin, bios):
    """(bytes read, bytes written, reads, writes) the device completed
    (Documentation/block/stat.rst: fields 1, 3, 5 and 7), then (read
    bios, write bios) submitted to it, from BIOS (_bios())."""
    with open(f"/sys/block/{os.path.basename(dev)}/stat") as f:
        v = [int(x) for x in f.read().split()]
    return (v[2] * SECTOR, v[6] * SECTOR, v[0], v[4],
            *bios.get(majmin, (0, 0)))


def _bios():
    """{MAJ:MIN: (read bios, write bios)} every cgroup submitted: what
    the throttle's IOPS rules count, before the block layer merges bios
    into the requests /sys/block/NAME/stat counts."""
    out = {}
    with open(f"{BLKIO}/blkio.throttle.io_serviced_recursive") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[1] in ("Read", "Write"):
                read, write = out.get(parts[0], (0, 0))
                n = int(parts[2])
                out[parts[0]] = ((n, write) if parts[1] == "Read"
                                 else (read, n))
    return out


@dataclass
class Peak:
    """The most one device moved in any WINDOW_S of a watch, each
    figure on its own, and the totals over the watch."""
    dev: str
    read_mb_per_s: float = 0
    write_mb_per_s: float = 0
    read_iops: float = 0
    write_iops: float = 0
    bytes_moved: int = 0
    bios: int = 0

    def escaped(self, limit):
        """The figures above LIMIT (with SLACK), as text; "" if none."""
        over = [f"{name} {value:.0f}" for name, value, cap in (
            ("read MB/s", self.read_mb_per_s, limit.mb_per_s),
            ("write MB/s", self.write_mb_per_s, limit.mb_per_s),
            ("read IOPS", self.read_iops, limit.iops),
            ("write IOPS", self.write_iops, limit.iops))
            if cap and value > cap * SLACK]
        return ", ".join(over)


class Watch:
    """`with Watch(devices) as w:` samples the devices' counters in a
    thread while the block runs; w.peaks then holds each device's
    Peak."""

    def __init__(self, devices):
        self.devices = list(devices)
        self.majmins = [_majmin(d) for d in self.devices]
        self.samples = []
        self.peaks = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self):
        self._take()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._take()
        self.peaks = [self._peak(i, dev)
                      for i, dev in enumerate(self.devices)]
        return False

    def _take(self):
        bios = _bios()
        self.samples.append((time.monotonic(),
                             [_counters(d, m, bios) for d, m in
                              zip(self.devices, self.majmins)]))

    def _sample(self):
        while not self._stop.wait(SAMPLE_S):
            self._take()

    def _peak(self, i, dev):
        peak = Peak(dev)
        first = self.samples[0][1][i]
        last = self.samples[-1][1][i]
        peak.bytes_moved = last[0] - first[0] + last[1] - first[1]
        peak.bios = last[4] - first[4] + last[5] - first[5]
        start = 0
        for t, counters in self.samples:
            # The earliest sample at least a window before this one.
            while (start + 1 < len(self.samples)
                   and t - self.samples[start + 1][0] >= WINDOW_S):
                start += 1
            t0, c0 = self.samples[start]
            if t - t0 < WINDOW_S:
                continue
            rate = [(b - a) / (t - t0) for a, b in zip(c0[i], counters[i])]
            peak.read_mb_per_s = max(peak.read_mb_per_s, rate[0] / 1e6)
            peak.write_mb_per_s = max(peak.write_mb_per_s, rate[1] / 1e6)
            peak.read_iops = max(peak.read_iops, rate[2])
            peak.write_iops = max(peak.write_iops, rate[3])
        return peak


def verdict(peaks, limit):
    """A note on a watch's PEAKS: the busiest member's most in any
    second, and which members went past LIMIT."""
    if not peaks:
        return ""
    busiest = max(peaks, key=lambda p: max(p.read_mb_per_s,
                                           p.write_mb_per_s))
    most = max(busiest.read_mb_per_s, busiest.write_mb_per_s)
    iops = max(max(p.read_iops, p.write_iops) for p in peaks)
    over = [f"{os.path.basename(p.dev)} {p.escaped(limit)}" for p in peaks
            if p.escaped(limit)]
    if over:
        return ("ESCAPED the throttle (most in a second): " + "; ".join(over))
    moved = sum(p.bytes_moved for p in peaks)
    bios = sum(p.bios for p in peaks)
    size = f", bios of {moved / bios / 1024:.0f}K on average" if bios else ""
    return (f"throttle held: busiest member {most:.1f} MB/s, {iops:.0f} "
            f"IOPS at most in a second{size}")
