"""The disks section's loop profile: members that are real block
devices, with the kernel's btrfs on the same ones beside nbdraid.

The nbdkit-filter members of disks.py cannot carry a kernel peer
(btrfs needs block devices).  Here each of the members is a loop
device over a sparse file on the scratch tmpfs, throttled by the
cgroup v1 blkio controller to the disk profile's 40 MB/s each way, and
500 IOPS each way while a random job runs (throttle.py: rules in the
root cgroup, removed when the section ends, also when it fails; the
IOPS rules count bios before they merge, which a disk's streams do
not pay).  Unlike the filters' member, a
loop device takes requests in parallel: 500 IOPS is a rate, not one
request at a time, so random I/O at queue depth 32 is not held to
2 ms a request.

nbdraid opens the loop devices with `direct = true`: its I/O is its
own threads' O_DIRECT bios, which the throttle sees as they are
submitted.  One member alone (fio with O_DIRECT straight on one loop
device) gives the measured limit; `nbdkit file cache=none` cannot
stand in for it, since writes through a block device's page cache go
out as 4K bios and blk-throttle counts each against the 500 IOPS
(2 MB/s).  Then, on the same loop devices (mkfs.btrfs -f over what
nbdraid left), btrfs raid6 and raid10, data and metadata, one file
on it served by `nbdkit file cache=none` (peers.Btrfs), the same jobs.

Every job runs under throttle.Watch, which reports the most each loop
device moved in any second: a member above its 40 MB/s or 500 IOPS
escaped the throttle, and the row says so.  btrfs's jobs that write
end with a `btrfs filesystem sync` inside the watch, so the writeback
its kernel threads do after fio is done is watched too.
"""
import os

import arrays
import cleanup
import command
import fio
import paths
import peers
import servers
import throttle
from measure import peer_failed
from results import Row
from . import disks, shapes

CASE = "loop"
LIMIT = throttle.Limit(disks.DISK.mb_per_s, round(disks.DISK.iops))
# Sequential jobs: the bandwidth alone (throttle.py: a disk merges a
# stream's bios, blk-throttle's IOPS rules would not).
STREAM_LIMIT = throttle.Limit(disks.DISK.mb_per_s)
# The btrfs profiles run beside nbdraid's levels of the same name.
BTRFS_LEVELS = (6, 10)
# Sparse: only what the jobs write takes memory.  Large enough that
# btrfs raid10 (3 x 1G of data) rewrites the region by copy-on-write
# without running out of space before a commit frees the old extents,
# and the region as large as the filter profile's, so that random
# writes rarely meet in a stripe (in 128M of RAID5 at 512K chunks,
# 51 stripes, qd32 gathered them: 1.38 of the limit).
MEMBER_BYTES = 1024 * shapes.MiB
REGION = 768 * shapes.MiB
JOBS = [fio.SEQ_WRITE, fio.SEQ_READ, fio.READERS_12, fio.RAND_READ,
        fio.RAND_WRITE]
PEERS = ("physical limit", "btrfs")


def run(ctx):
    """Add the loop profile's rows; return a sentence on them."""
    why = throttle.unavailable()
    if why:
        ctx.rows.append(Row(disks.SECTION, f"{CASE} profile", "", "skipped",
                            "", None, note=why, peer_names=PEERS))
        return f"Loop profile: {why}."
    members = ctx.disk_members
    runtime = max(ctx.runtime_s, 2)
    verdicts = []
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, "disks-loop")
        loops = throttle.Loops(scope, d, members, MEMBER_BYTES, LIMIT)
        member = _member(ctx, loops, runtime, verdicts)
        mine = {level: _nbdraid(ctx, d, loops, level, runtime, verdicts)
                for level in ctx.disk_levels}
        kernel = {level: _btrfs(ctx, d, loops, level, runtime, verdicts)
                  for level in BTRFS_LEVELS if level in ctx.disk_levels}
    for level in ctx.disk_levels:
        for job in JOBS:
            _add_rows(ctx, level, members, job, mine[level][job], member,
                      kernel.get(level))
    escaped = [v for v in verdicts if v.startswith("ESCAPED")]
    return (f"Loop profile (rows `{CASE} ...`): {members} loop devices over "
            f"sparse {shapes.mib(MEMBER_BYTES)} files, each throttled by "
            f"blkio rules in the root cgroup to {LIMIT.mb_per_s} MB/s and "
            f"{LIMIT.iops} IOPS each way (the IOPS for random jobs only: "
            "a disk merges a stream's requests); nbdraid with direct = true, chunk "
            f"{disks.MAIN_CHUNK}, then btrfs raid6 and raid10 (data and "
            "metadata) on the same devices, one file on it served by "
            "`nbdkit file cache=none`; jobs over "
            f"{shapes.mib(REGION)}, {disks.RAMP_S} s ramp and {runtime} s a "
            "run.  Figures are fractions of the physical limit (as above, "
            "but a loop device takes requests in parallel: 500 IOPS is a "
            "rate); the note gives the fraction of the limit one loop "
            "device measured alone (fio, O_DIRECT), btrfs's own fraction, "
            "and what the member that moved most did in its busiest second: "
            + (f"{len(escaped)} of {len(verdicts)} jobs went past the "
               "throttle." if escaped else
               f"the throttle held on all {len(verdicts)} jobs."))


def _watched(loops, verdicts, job, fn):
    """FN() under JOB's limit and a throttle.Watch of LOOPS: (its
    result, the note)."""
    loops.apply(LIMIT if job.is_random else STREAM_LIMIT)
    with throttle.Watch(loops.devices) as watch:
        got = fn()
    note = throttle.verdict(watch.peaks, loops.limit)
    verdicts.append(note)
    return got, note


def _out(ctx, tag):
    return os.path.join(ctx.root, f"fio-{tag}.json")


def _member(ctx, loops, runtime, verdicts):
    """The first loop device alone: {job: result}."""
    got = {}
    for job in disks.MEMBER_JOBS:
        got[job], note = _watched(
            loops, verdicts, job, lambda: fio.run_device(
                job, loops.devices[0], REGION, runtime, disks.RAMP_S,
                _out(ctx, "loop-member")))
        unit, value, nominal = (("IOPS", got[job].iops, LIMIT.iops)
                                if job.is_random else
                                ("MB/s", got[job].mb_per_s, LIMIT.mb_per_s))
        ctx.rows.append(Row(disks.SECTION, f"{CASE} one member", job.name,
                            "IOPS" if job.is_random else "bandwidth", unit,
                            value, ceiling=nominal, peer_names=PEERS,
                            note="fio with O_DIRECT straight on one loop "
                            f"device; {note}"))
    return got


def _nbdraid(ctx, workdir, loops, level, runtime, verdicts):
    """JOBS on an nbdraid array of LEVEL over LOOPS: {job: (result,
    note)}.  No prefill: the throttle charges a hole as data."""
    spec = arrays.Spec(f"{CASE} RAID{level}", level, len(loops.devices),
                       MEMBER_BYTES, disks.MAIN_CHUNK)
    with cleanup.Scope() as scope:
        conf = os.path.join(workdir, f"raid{level}.conf")
        with open(conf, "w") as f:
            f.write(spec.config(f"loop{level}", loops.devices,
                                ["direct = true"]))
        # --force: the loop devices hold the last level's superblocks.
        command.run([paths.NBDRAID, "create", "--assume-clean", "--force",
                     conf])
        server = servers.raid(scope, conf, f"nbdkit-raid{level}")
        return {job: _watched(loops, verdicts, job, lambda: fio.run(
            job, server.uri, REGION, runtime, disks.RAMP_S,
            _out(ctx, "loop-nbdraid"))) for job in JOBS}


def _btrfs(ctx, workdir, loops, level, runtime, verdicts):
    """JOBS on btrfs of LEVEL's profile over LOOPS: {job: (result,
    note)}, or why not."""
    if ctx.btrfs_why:
        return ctx.btrfs_why
    profile = arrays.BTRFS_PROFILE[level]
    try:
        with cleanup.Scope() as scope:
            peer = peers.Btrfs(scope, ctx.scratch(scope, f"loop-{profile}"),
                               profile, len(loops.devices), MEMBER_BYTES,
                               REGION, devices=loops.devices)
            # A hole on btrfs costs no I/O: reads must find data.
            loops.apply(STREAM_LIMIT)
            fio.prefill(peer.uri, REGION, _out(ctx, "prefill"))
            command.run(["btrfs", "filesystem", "sync", peer.mnt],
                        timeout=peers.BTRFS_TIMEOUT_S)
            return {job: _watched(loops, verdicts, job,
                                  lambda: _btrfs_job(ctx, peer, job, runtime))
                    for job in JOBS}
    except (command.CommandFailed, RuntimeError) as e:
        return peer_failed(ctx, "btrfs", e)


def _btrfs_job(ctx, peer, job, runtime):
    got = fio.run(job, peer.uri, REGION, runtime, disks.RAMP_S,
                  _out(ctx, "loop-btrfs"))
    if job.direction == "write":
        command.run(["btrfs", "filesystem", "sync", peer.mnt],
                    timeout=peers.BTRFS_TIMEOUT_S)
    return got


def _value(result, job):
    return result.iops if job.is_random else result.mb_per_s


def _add_rows(ctx, level, members, job, mine, member, kernel):
    """MINE: nbdraid's (result, note); MEMBER: the member alone's
    results; KERNEL: btrfs's {job: (result, note)}, why not, or None
    where no btrfs profile runs beside LEVEL."""
    result, watched = mine
    same = next(j for j in disks.MEMBER_JOBS if j.is_random == job.is_random
                and j.direction == job.direction)
    nominal = disks._limit(level, members, job, LIMIT.mb_per_s, LIMIT.iops)
    measured = _value(member[same], same)
    real = disks._limit(level, members, job, measured, measured)
    value = _value(result, job)
    notes = [f"{value / real:.2f} of the measured limit"]
    target = disks._target(job)
    if target:
        notes.append(f"target {target:.2f}: "
                     f"{'met' if value / nominal >= target else 'missed'}")
    notes.append(f"nbdraid's {watched}")
    theirs = None
    if isinstance(kernel, str):
        notes.append(kernel)
    elif kernel:
        theirs, their_note = kernel[job]
        notes.append(f"btrfs {_value(theirs, job) / nominal:.2f} of the "
                     f"limit, btrfs's {their_note}")
    case = f"{CASE} RAID{level} {members} members chunk {disks.MAIN_CHUNK}"
    metric, unit = ("IOPS", "IOPS") if job.is_random else ("bandwidth", "MB/s")
    ctx.rows.append(Row(disks.SECTION, case, job.name, metric, unit, value,
                        ceiling=nominal,
                        kernel=theirs and _value(theirs, job),
                        note="; ".join(notes), peer_names=PEERS))
    if job.is_random:
        ctx.rows.append(Row(disks.SECTION, case, job.name, "p99 latency",
                            "us", result.p99_us,
                            kernel=theirs and theirs.p99_us,
                            peer_names=PEERS))
