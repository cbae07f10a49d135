"""Run jobs on an nbdraid array and the same jobs on both peers, and
turn the figures into rows.

nbdraid, the transport ceiling and the kernel peer take turns on each
job, in rounds of nbdraid, ceiling, btrfs, ceiling, nbdraid; each
side's figure is the median of its runs.  This VM's memory bandwidth
drifts from minute to minute and jumps from run to run: measuring one
side minutes after the other moved single ratios by 15%, once by half
(btrfs raid6 measured once for the session, nbdraid minutes later
while the VM ran at half speed), and one round of the same job gave
ratios from 0.8 to 1.2.  Cases read against each other (the chunk
sweep's arrays) take their turns in the same rounds.  Their data is
written the same way, a slice of each side in turn, for its memory is
not all equally fast either.  The rows say how far the rounds' ratios
to the ceiling spread.  A peer that cannot be set up gives a note in
its rows instead of stopping the run; nbdraid failing stops its
section, since nbdraid is what is measured.
"""
import os
from dataclasses import dataclass, field

import cleanup
import command
import fio
import peers
from results import Row


@dataclass
class Context:
    root: str                   # scratch directory (tmpfs or --dir)
    runtime_s: int
    ramp_s: int
    rounds: int                 # nbdraid/ceiling rounds per job
    quick: bool
    btrfs_why: str = None       # why the kernel peer is unavailable
    disk_members: int = 6       # members of the disks section's arrays
    disk_levels: tuple = (0, 5, 6, 10)  # and their levels
    rows: list = field(default_factory=list)
    cache: dict = field(default_factory=dict)
    serial: int = 0

    def scratch(self, scope, name):
        """A fresh directory, removed when SCOPE ends.  Registered
        first, so it goes after everything inside it is unmounted and
        detached."""
        self.serial += 1
        d = os.path.join(self.root, f"{self.serial:02d}-{name}")
        os.makedirs(d)
        scope.register(cleanup.remove_tree, d)
        return d

    def fio(self, job, uri, region, tag):
        out = os.path.join(self.root, f"fio-{tag}.json")
        return fio.run(job, uri, region, self.runtime_s, self.ramp_s, out)

    def prefill(self, uri, region, offset=0, extra=()):
        fio.prefill(uri, region, os.path.join(self.root, "fio-prefill.json"),
                    offset, extra)


def figures(result, job):
    """(metric, unit, value) triples a job's result is reported by."""
    if job.is_random:
        return [("IOPS", "IOPS", result.iops),
                ("p99 latency", "us", result.p99_us)]
    return [("bandwidth", "MB/s", result.mb_per_s)]


def add_rows(ctx, section, case, job, mine, ceiling, kernel, note="",
             spread=""):
    """MINE, CEILING, KERNEL: fio results, or a str saying why not.
    SPREAD, said of the job's first figure, goes on its row."""
    notes = [n for n in (note, _why(ceiling), _why(kernel)) if n]
    for i, (metric, unit, value) in enumerate(figures(mine, job)):
        ctx.rows.append(Row(
            section, case, job.name, metric, unit, value,
            ceiling=_pick(ceiling, job, i), kernel=_pick(kernel, job, i),
            note="; ".join(dict.fromkeys(notes)),
            spread=spread if i == 0 else ""))


def _why(r):
    return r if isinstance(r, str) else ""


def _pick(r, job, i):
    return None if r is None or isinstance(r, str) else figures(r, job)[i][2]


def nbdraid_jobs(ctx, array, jobs, region):
    ctx.prefill(array.uri, region)
    return {job: ctx.fio(job, array.uri, region, "nbdraid") for job in jobs}


@dataclass
class _Turns:
    """One case's runs of one job, round by round."""
    mine: list = field(default_factory=list)
    ceiling: list = field(default_factory=list)
    kernel: list = field(default_factory=list)
    ratios: list = field(default_factory=list)   # nbdraid / ceiling

    def summary(self, kernel):
        """(nbdraid's result, the ceiling's, the kernel peer's or why
        not, spread): each side the median of its runs, the spread the
        range of the rounds' ratios to the ceiling of the job's first
        figure."""
        spread = (f"{min(self.ratios):.2f}-{max(self.ratios):.2f}"
                  if len(self.ratios) > 1 else "")
        if not isinstance(kernel, str):
            kernel = fio.median(self.kernel)
        return fio.median(self.mine), fio.median(self.ceiling), kernel, spread


def _round(ctx, job, region, array, ceiling, kernel, turns):
    """One round of JOB into TURNS: nbdraid, ceiling, btrfs, ceiling,
    nbdraid, so that a drift that is linear over the round cancels out
    of both ratios (btrfs runs once, at the centre, to keep the
    benchmark's length).  Returns KERNEL, or why it failed."""
    runs = [ctx.fio(job, array.uri, region, "nbdraid"),
            ctx.fio(job, ceiling.uri, region, "ceiling")]
    if not isinstance(kernel, str):
        try:
            turns.kernel.append(ctx.fio(job, kernel.uri, region, "btrfs"))
        except (command.CommandFailed, RuntimeError) as e:
            kernel = peer_failed(ctx, "btrfs", e)
    runs += [ctx.fio(job, ceiling.uri, region, "ceiling"),
             ctx.fio(job, array.uri, region, "nbdraid")]
    turns.mine += runs[0::3]
    turns.ceiling += runs[1:3]
    turns.ratios.append(_first(fio.median(runs[0::3]), job) /
                        _first(fio.median(runs[1:3]), job))
    return kernel


def _first(result, job):
    return figures(result, job)[0][2]


# Cache keys name the shape, not the exact size: arrays that differ
# only in chunk size differ by a few rounding KiB, and the files are
# sparse, so only the region fio touches costs anything.
def ceiling_jobs(ctx, spec, array_bytes, jobs, region):
    key = ("ceiling", spec.level, spec.groups, spec.members,
           spec.member_bytes, region)
    return _cached(ctx, key, jobs, region, lambda scope, d: peers.Ceiling(
        scope, d, array_bytes))


def _cached(ctx, key, jobs, region, make_peer):
    todo = [j for j in jobs if (key, j) not in ctx.cache]
    if todo:
        with cleanup.Scope() as scope:
            d = ctx.scratch(scope, key[0])
            try:
                peer = make_peer(scope, d)
                ctx.prefill(peer.uri, region)
                for job in todo:
                    ctx.cache[key, job] = ctx.fio(job, peer.uri, region,
                                                  key[0])
            except (command.CommandFailed, RuntimeError) as e:
                why = peer_failed(ctx, key[0], e)
                for job in todo:
                    ctx.cache.setdefault((key, job), why)
    return {job: ctx.cache[key, job] for job in jobs}


def peer_failed(ctx, name, error):
    """The note for a peer that failed.  A btrfs command stuck in the
    kernel means btrfs is wedged until a reboot: no later section tries
    it again (each try would leave another stuck process)."""
    if name == "btrfs" and isinstance(error, command.CommandStuck):
        ctx.btrfs_why = f"btrfs peer skipped: earlier, {error}"
    return f"{name} failed: {error}"


def compare(ctx, section, cases, spec, jobs, region, note=""):
    """Run JOBS on the served arrays of CASES, (case, array) pairs of
    SPEC's shape, on the ceiling and on the kernel peer in turns; add
    the rows.  Each round takes every case, in the order opposite to
    the round before's: cases read against each other (the chunk
    sweep's largest chunk against its best) come from the same
    minutes, not from minutes apart."""
    array_bytes = min(array.array_bytes() for _, array in cases)
    with cleanup.Scope() as scope:
        ceiling = peers.Ceiling(scope, ctx.scratch(scope, "ceiling"),
                                array_bytes)
        kernel = _kernel_peer(ctx, scope, spec, array_bytes)
        kernel = _prefill_in_turns(
            ctx, [array.uri for _, array in cases] + [ceiling.uri], kernel,
            region)
        for job in jobs:
            turns = {case: _Turns() for case, _ in cases}
            order = list(cases)
            for _ in range(ctx.rounds):
                for case, array in order:
                    kernel = _round(ctx, job, region, array, ceiling,
                                    kernel, turns[case])
                order.reverse()
            for case, _ in cases:
                mine, theirs, kernel_result, spread = turns[case].summary(
                    kernel)
                add_rows(ctx, section, case, job, mine, theirs,
                         kernel_result, note, spread)


def _kernel_peer(ctx, scope, spec, array_bytes):
    """btrfs of SPEC's profile and shape, or why not."""
    if ctx.btrfs_why:
        return ctx.btrfs_why
    try:
        return peers.Btrfs(scope, ctx.scratch(scope, "btrfs"),
                           spec.btrfs_profile, spec.members,
                           spec.member_bytes, array_bytes)
    except (command.CommandFailed, RuntimeError) as e:
        return peer_failed(ctx, "btrfs", e)


# The slice each side of a comparison is prefilled in before the next
# side's turn.
PREFILL_SLICE = 16 << 20


def _prefill_in_turns(ctx, uris, kernel, region):
    """Prefill REGION of every URI and of the KERNEL peer a slice at a
    time, each side in turn, the first turn passing from side to side
    slice by slice.  This VM's memory is not all equally fast (it hands
    freed memory back to its host): two identical RAID0 arrays read 19%
    apart, whichever was prefilled first being the slower, and 1% apart
    prefilled in turns, so sides prefilled one after the other would be
    measured on different memory.  Even in turns, the side that went
    first in every slice read 3-6% slower than the one that went last
    (three file servers, 6 rounds), and nbdraid always went first.
    Returns KERNEL, or why its prefill failed."""
    kernel_uri = None if isinstance(kernel, str) else kernel.uri
    sides = list(uris) + ([kernel_uri] if kernel_uri else [])
    for n, offset in enumerate(range(0, region, PREFILL_SLICE)):
        length = min(PREFILL_SLICE, region - offset)
        turn = n % len(sides)
        for uri in sides[turn:] + sides[:turn]:
            try:
                ctx.prefill(uri, length, offset)
            except (command.CommandFailed, RuntimeError) as e:
                if uri != kernel_uri:
                    raise
                sides.remove(uri)
                kernel_uri = None
                kernel = peer_failed(ctx, "btrfs", e)
    return kernel
