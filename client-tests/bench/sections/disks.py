"""Members that behave like disks: how close nbdraid comes to the
physical limit of its members, and whether it keeps every one busy.

Every other section puts members on tmpfs, where the figures measure
CPU and memory.  Here each member is an NBD export of a file (tmpfs
underneath) behind four nbdkit filters, closest to the client first:

- noparallel serialize=all-requests: the member serves one request
  at a time, however many connections nbdraid opens to it (4 by
  default; serialize=requests would allow one per connection), as a
  disk serves one seek at a time: its queue depth is 1;
- delay: the time every read and write takes, once a request;
- blocksize maxdata=32K: the request cut in pieces for the rate
  filter (see below);
- rate: the member's bandwidth.  `rate=` limits the server as a whole
  (`connection-rate=` would limit each connection, and nbdraid's four
  connections would get four times the limit); reads and writes have
  a bucket each, so a member reads and writes at the rate at once.

The rate filter is a token bucket `burstiness` seconds of the rate
deep (default 2 s).  A member that idles fills it, and then moves its
next megabytes at once: with 0.1 s, one sequential reader at queue
depth 1 read RAID0 at the six members' full rate, each member idle
two thirds of the time.  So the bucket holds one delay's worth
(burstiness = the delay), which fills while a request sleeps its
delay: each request takes about the longer of its delay and its
transfer, back to back or after idling.  Requests under delay x rate
(80K) cost the delay, larger ones move at the rate.  A request larger
than the bucket would get one bucketful per sleep (1M reads through an
80K bucket moved 6 MB/s), hence the blocksize filter's pieces.

There is no SSD profile: nbdkit 1.32's delay filter takes whole
milliseconds (`rdelay=0.1ms` is no delay: 17,000 IOPS at queue depth
1), and two cores cannot emulate six 400 MB/s members (one alone,
with no delay, moved 190-320 MB/s of its 400 beside the arrays' own
work).

The limits each figure is a fraction of, for N members of bandwidth B
and per-request time D (a member at queue depth 1 does 1/D IOPS):

- sequential writes, full stripes: data members x B (N for RAID0, N-1
  RAID5, N-2 RAID6, N/2 RAID10);
- sequential reads, one stream or 12: N x B;
- random 4K: N x (1/D) / the member I/Os one request costs: reads 1;
  writes 1 on RAID0, 2 on RAID10 (both copies), 4 on RAID5 and 6 on
  RAID6 (read-modify-write: read the old data and parity, write them).

The nominal limit uses the profile's B and D; the measured limit puts
in their place what one such member measured alone just before each
level's arrays (the same jobs, straight to the member), so that what
the emulation itself loses is not counted against nbdraid: nbdkit's
own time per request and, on a loaded machine, the wait for a core
after every sleep add to each request's 2 ms (one member alone did
300-450 of its nominal 500 IOPS at load averages of 4 to 6 on two
cores).  btrfs cannot run on these members (it needs block devices):
the kernel peer is in the loop profile (disk_loops.py), which ends the
section.  After each parity or mirror level the section rebuilds a
member (disk_rebuild.py).
"""
import os
from dataclasses import dataclass

import arrays
import cleanup
import command
import fio
import paths
import servers
from results import Row
from . import disk_rebuild, shapes

TITLE = "Members that behave like disks"
SECTION = "disks"
RAMP_S = 1
# md's default chunk: the random jobs and the readers run on it.
MAIN_CHUNK = "512K"
# Per level: parity members and copies (a full stripe's data fills
# (members - parity) / copies of them), and the member I/Os one random
# 4K write costs (a random 4K read costs one).
PARITY = {0: 0, 5: 1, 6: 2, 10: 0}
COPIES = {0: 1, 5: 1, 6: 1, 10: 2}
WRITE_IOS = {0: 1, 5: 4, 6: 6, 10: 2}
# The targets, fractions of the limit (issue 46).
TARGET = {"seq": 0.90, "readers": 0.85, "rand write": 0.80}
SEQ_JOBS = [fio.SEQ_WRITE, fio.SEQ_READ]
MAIN_JOBS = [fio.READERS_12, fio.READERS_1, fio.RAND_READ, fio.RAND_WRITE]
MEMBER_JOBS = [fio.SEQ_WRITE, fio.SEQ_READ, fio.RAND_WRITE, fio.RAND_READ]
PEERS = ("nominal limit", "measured limit")


@dataclass(frozen=True)
class Profile:
    name: str
    mb_per_s: int               # bandwidth, 10^6 bytes a second
    delay_ms: float             # the least time a request takes

    @property
    def iops(self):
        return 1000 / self.delay_ms

    @property
    def label(self):
        return f"{self.name} ({self.mb_per_s} MB/s, {self.delay_ms:g} ms)"

    def filters(self, path):
        # rate counts bits, and nbdkit's M is 2^20: give it plain bits.
        return ["--filter=noparallel", "--filter=delay",
                "--filter=blocksize", "--filter=rate",
                "file", path, "serialize=all-requests",
                f"rdelay={self.delay_ms:g}ms", f"wdelay={self.delay_ms:g}ms",
                "maxdata=32K",
                f"rate={self.mb_per_s * 8 * 10**6}",
                f"burstiness={self.delay_ms / 1000:g}"]


DISK = Profile("disk", 40, 2)


def run(ctx):
    profiles = [(DISK, ["64K", "512K", "1024K"] if ctx.quick else
                 ["32K", "64K", "128K", "256K", "512K", "1024K"])]
    member_bytes = 256 * shapes.MiB
    region = 768 * shapes.MiB
    runtime = max(ctx.runtime_s, 2)
    members = ctx.disk_members
    for profile, chunks in profiles:
        for level in ctx.disk_levels:
            member = _member(ctx, profile, level, member_bytes, region,
                             runtime)
            for chunk in chunks:
                jobs = SEQ_JOBS + (MAIN_JOBS if chunk == MAIN_CHUNK else [])
                spec = arrays.Spec(f"{profile.name} RAID{level} "
                                   f"{members} members chunk {chunk}",
                                   level, members, member_bytes, chunk)
                got = _array_jobs(ctx, profile, spec, jobs, region, runtime)
                for job in jobs:
                    _add_rows(ctx, profile, spec, job, got[job], member)
            _add_scaling_row(ctx, profile, level, members)
            if level in disk_rebuild.LEVELS:
                disk_rebuild.run(ctx, profile, level, member)
    from . import disk_loops    # here: it imports this module
    loops = disk_loops.run(ctx)
    return (f"{members} members of {shapes.mib(member_bytes)}, each an NBD "
            "export of a file behind nbdkit's noparallel (one request at a "
            "time, all connections), delay (once a request), blocksize and "
            "rate (the bandwidth, per member server) filters, the profile "
            + ", ".join(p.label for p, _ in profiles)
            + f"; jobs over {shapes.mib(region)}, {RAMP_S} s ramp and "
            f"{runtime} s a run, one run each.  Each figure is a fraction of "
            "the members' nominal limit: sequential writes data members x "
            "bandwidth, reads members x bandwidth, random 4K members x "
            "1/delay / member I/Os a request costs (write: RAID0 1, RAID10 "
            "2, RAID5 4, RAID6 6); the measured limit puts one member's own "
            "figures, measured alone before each level, in place of the "
            "profile's.  The note says where the issue's targets stand "
            "(sequential 0.90, 12 readers 0.85, random writes 0.80 of the "
            f"limit).  Chunk {MAIN_CHUNK} carries the random jobs and the "
            f"readers (plot: disks.png).  {loops}")


def _fio(ctx, job, uri, region, runtime, tag):
    out = os.path.join(ctx.root, f"fio-{tag}.json")
    return fio.run(job, uri, region, runtime, RAMP_S, out)


def _member(ctx, profile, level, member_bytes, region, runtime):
    """One member alone, just before LEVEL's arrays: {job: result}."""
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, f"disks-{profile.name}-member")
        path = os.path.join(d, "m.img")
        with open(path, "wb") as f:
            f.truncate(member_bytes)
        server = servers.start(scope, d, "member", profile.filters(path))
        got = {job: _fio(ctx, job, server.uri, min(region, member_bytes),
                         runtime, "member") for job in MEMBER_JOBS}
    for job in MEMBER_JOBS:
        unit, value, nominal = ((("IOPS", got[job].iops, profile.iops))
                                if job.is_random else
                                ("MB/s", got[job].mb_per_s, profile.mb_per_s))
        ctx.rows.append(Row(SECTION, f"{profile.name} one member, before "
                            f"RAID{level}", job.name,
                            "IOPS" if job.is_random else "bandwidth", unit,
                            value, ceiling=nominal, peer_names=PEERS,
                            note="the member alone: the nominal limit is "
                            "the profile's"))
    return got


def _array_jobs(ctx, profile, spec, jobs, region, runtime):
    """Serve SPEC over members of PROFILE; run JOBS on it.  No prefill:
    a hole costs a member the same delay and rate as data."""
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, f"disks-{profile.name}-raid{spec.level}-"
                        f"{spec.chunk}")
        uris = []
        for i in range(spec.members):
            path = os.path.join(d, f"d{i}.img")
            with open(path, "wb") as f:
                f.truncate(spec.member_bytes)
            uris.append(servers.start(scope, d, f"member{i}",
                                      profile.filters(path)).uri)
        conf = os.path.join(d, "a.conf")
        with open(conf, "w") as f:
            f.write(spec.config("a", uris))
        command.run([paths.NBDRAID, "create", "--assume-clean", conf])
        server = servers.raid(scope, conf, "nbdkit")
        return {job: _fio(ctx, job, server.uri, region, runtime, "nbdraid")
                for job in jobs}


def _limit(level, members, job, mb_per_s, iops):
    """The limit of JOB on LEVEL over MEMBERS members that each move
    MB_PER_S or do IOPS."""
    if job.is_random:
        ios = WRITE_IOS[level] if job.direction == "write" else 1
        return members * iops / ios
    if job.direction == "write":
        return (members - PARITY[level]) // COPIES[level] * mb_per_s
    return members * mb_per_s


def _target(job):
    if job.is_random:
        return TARGET["rand write"] if job.direction == "write" else None
    return TARGET["readers"] if job.numjobs > 1 else \
        TARGET["seq"] if job.iodepth > 1 else None


def _add_rows(ctx, profile, spec, job, mine, member):
    def measured(j):
        m = member[j]
        return m.iops if j.is_random else m.mb_per_s
    # The member job of the same kind: its random job, or its
    # sequential job of the same direction.
    same = next(j for j in MEMBER_JOBS if j.is_random == job.is_random
                and j.direction == job.direction)
    nominal = _limit(spec.level, spec.members, job, profile.mb_per_s,
                     profile.iops)
    real = _limit(spec.level, spec.members, job, measured(same),
                  measured(same))
    value = mine.iops if job.is_random else mine.mb_per_s
    target = _target(job)
    note = ""
    if target:
        verdict = "met" if value / nominal >= target else "missed"
        note = f"target {target:.2f} of the nominal limit: {verdict}"
    metric, unit = ("IOPS", "IOPS") if job.is_random else ("bandwidth", "MB/s")
    ctx.rows.append(Row(SECTION, spec.label, job.name, metric, unit, value,
                        ceiling=nominal, kernel=real, note=note,
                        peer_names=PEERS))
    if job.is_random:
        ctx.rows.append(Row(SECTION, spec.label, job.name, "p99 latency",
                            "us", mine.p99_us, peer_names=PEERS,
                            note="a member at queue depth 1 takes "
                            f"{profile.delay_ms:g} ms a request"))


def _add_scaling_row(ctx, profile, level, members):
    """12 readers / 1 reader on LEVEL's main chunk."""
    case = f"{profile.name} RAID{level} {members} members chunk {MAIN_CHUNK}"
    by_job = {r.job: r for r in ctx.rows if r.section == SECTION
              and r.case == case and r.unit == "MB/s"}
    many, one = by_job.get(fio.READERS_12.name), by_job.get(fio.READERS_1.name)
    if many and one and one.nbdraid:
        ctx.rows.append(Row(SECTION, case, "12 readers / 1 reader", "scaling",
                            "x", many.nbdraid / one.nbdraid,
                            peer_names=PEERS))
