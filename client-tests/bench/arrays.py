"""nbdraid arrays for the benchmark: a spec, its config file, its member
files, `nbdraid create`, the server, and the control verbs a section
needs (status, fail, remove, add, grow, speed-limit)."""
import json
import os
import time
from dataclasses import dataclass

import command
import paths
import servers

# The btrfs data/metadata profile that matches each md level; a nested
# RAID60 is compared with btrfs raid6 over the same disks, the nearest
# btrfs has.
BTRFS_PROFILE = {0: "raid0", 1: "raid1", 5: "raid5", 6: "raid6",
                 10: "raid10"}


@dataclass
class Spec:
    label: str                  # e.g. "RAID6 6x256M 128K"
    level: int
    members: int
    member_bytes: int
    chunk: str = "128K"
    bitmap: bool = True
    ppl: bool = False           # consistency-policy = ppl (RAID5)
    journal_mode: str = None    # consistency-policy = journal, this mode
    groups: int = 0             # >0: RAID0 of `groups` RAID`level` groups
    group_chunk: str = "64K"

    @property
    def btrfs_profile(self):
        return BTRFS_PROFILE[self.level]

    def config(self, name, disks, settings=(), journal=None):
        lines = ["[array]", f"name = {name}", "socket = ctl.sock"]
        lines += settings
        if self.groups:
            per = self.members // self.groups
            lines += ["level = 0", f"chunk = {self.chunk}", "[members]"]
            lines += [f"member = array:g{g}" for g in range(self.groups)]
            for g in range(self.groups):
                lines += [f"[array g{g}]", f"level = {self.level}",
                          f"chunk = {self.group_chunk}"]
                lines += self._bitmap_lines()
                lines += [f"[members g{g}]"]
                group = disks[g * per:(g + 1) * per]
                lines += [f"member = {d}" for d in group]
            return "\n".join(lines) + "\n"
        lines += [f"level = {self.level}"]
        if self.level != 1:
            lines += [f"chunk = {self.chunk}"]
        lines += self._bitmap_lines()
        lines += ["[members]"] + [f"member = {d}" for d in disks]
        if self.journal_mode:
            lines += [f"journal = {journal}"]
        return "\n".join(lines) + "\n"

    def _bitmap_lines(self):
        if self.ppl:
            return ["consistency-policy = ppl"]
        if self.journal_mode:
            return ["consistency-policy = journal",
                    f"journal-mode = {self.journal_mode}"]
        return [] if self.bitmap or self.level == 0 else ["bitmap = none"]


# A write journal's device: md's own default is as large, and it leaves
# a write-back cache of 8 MiB (journal-cache.c: a sixteenth).
JOURNAL_BYTES = 128 << 20


def written(path, size):
    """A file of SIZE bytes, every block written (zeros)."""
    block = bytes(1 << 20)
    with open(path, "wb") as f:
        for _ in range(size // len(block)):
            f.write(block)
        f.truncate(size)


class Array:
    """A created array in DIR, served once start() is called.  With
    resync, its members are written out (no holes to skip) and it is
    created as md creates, so the server has a full resync to run: held
    at md's crawl (speed-max 64K/s) until speed_limit lifts it, so that
    it can be timed from there as a rebuild is from `nbdraid add`.
    DISKS: members made by the caller (e.g. NBD URIs), instead of
    files of the spec's size in its directory."""

    def __init__(self, scope, workdir, name, spec, resync=False,
                 disks=None):
        self.spec = spec
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir)
        self.disks = disks or self._files(resync)
        self.conf = os.path.join(self.dir, "a.conf")
        journal = os.path.join(self.dir, "j.img")
        if spec.journal_mode:
            with open(journal, "wb") as f:
                f.truncate(JOURNAL_BYTES)
        with open(self.conf, "w") as f:
            f.write(spec.config(name, self.disks,
                                ["speed-max = 64K"] if resync else [],
                                journal))
        # Fresh sparse members are all zeros, whose parity is zero: no
        # initial resync to disturb the figures, unless one is wanted.
        command.run([paths.NBDRAID, "create"]
                    + ([] if resync else ["--assume-clean"]) + [self.conf])
        self.scope = scope
        self.server = None

    def _files(self, resync):
        files = [os.path.join(self.dir, f"d{i}.img")
                 for i in range(self.spec.members)]
        for path in files:
            if resync:
                written(path, self.spec.member_bytes)
            else:
                with open(path, "wb") as f:
                    f.truncate(self.spec.member_bytes)
        return files

    def start(self, extra=()):
        self.server = servers.raid(self.scope, self.conf, "nbdkit", extra)
        # The control socket may appear after nbdkit's pidfile: wait for
        # it, or `nbdraid status` right after start finds nothing.
        ctl = os.path.join(self.dir, "ctl.sock")
        deadline = time.monotonic() + 30
        while not os.path.exists(ctl):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.conf}: no control socket {ctl} "
                                   "30 s after nbdkit started")
            time.sleep(0.05)
        return self.server

    def stop(self):
        if self.server:
            self.server.stop()
            self.server = None

    @property
    def uri(self):
        return self.server.uri

    def status(self):
        return json.loads(command.run([paths.NBDRAID, "status", "--json",
                                   self.conf]))

    def array_bytes(self):
        return self.status()["array_bytes"]

    def fail(self, member, group=None):
        argv = [paths.NBDRAID, "fail", self.conf, str(member)]
        if group is not None:
            argv += ["--array", group]
        command.run(argv)

    def device(self, role):
        """The path of the device serving ROLE."""
        for dev in self.status()["devices"]:
            if dev["role"] == role:
                return dev["path"]
        raise RuntimeError(f"{self.conf}: no device serves role {role}")

    def remove(self, path):
        command.run([paths.NBDRAID, "remove", self.conf, path])

    def add(self, path):
        command.run([paths.NBDRAID, "add", self.conf, path])

    def grow_raid_devices(self, n):
        """Start restriping onto N members (spares added first)."""
        command.run([paths.NBDRAID, "grow", self.conf, "--raid-devices",
                     str(n)])

    def check(self):
        """Start a check (md's scrub); wait_rebuilt waits for it."""
        command.run([paths.NBDRAID, "check", self.conf])

    def speed_limit(self, min_mb, max_mb):
        command.run([paths.NBDRAID, "speed-limit", self.conf, str(min_mb),
                 str(max_mb)])

    def wait_rebuilt(self, timeout_s):
        """Wait (nbdraid wait: no polling to take CPU from the rebuild)
        until no job runs, check every role works; return the seconds
        it took."""
        t0 = time.monotonic()
        command.run([paths.NBDRAID, "wait", self.conf], timeout=timeout_s)
        took = time.monotonic() - t0
        j = self.status()
        if j["job"]["kind"] != "idle" or j["working"] != j["members"]:
            raise RuntimeError(f"{self.conf}: rebuild over but {j['working']}"
                               f" of {j['members']} roles work, job "
                               f"{j['job']}")
        return took
