"""The performance targets nbdraid is built to (client-tests/bench/README.md
lists them), checked against one run's figures: for each, the
figure this run measured, the bound, and whether it is met.  A target
whose rows the run did not measure (--quick, --only) says so.

    python3 client-tests/bench/targets.py bench-results/bench.csv

Where nbdraid and the ceiling took turns in rounds, the rounds' range
of the ratio stands beside the median: a target whose range straddles
the bound is met in some rounds and missed in others.
"""
import sys
from dataclasses import dataclass
from typing import Callable

import results

LEVELS = ["RAID0", "RAID1", "RAID5", "RAID6", "RAID10"]
SEQ_READ, SEQ_WRITE = "seq read 1M qd16", "seq write 1M qd16"
RAND_READ, RAND_WRITE = "rand read 4K qd32", "rand write 4K qd32"
RSS_LIMIT_KIB = 256 * 1024


@dataclass(frozen=True)
class Figure:
    value: float
    spread: str = ""            # the rounds' range, if the rows have it


@dataclass(frozen=True)
class Target:
    name: str
    bound: float
    figure: Callable            # rows -> Figure, or None: not measured
    at_most: bool = False       # the figure must not exceed the bound

    def met(self, value):
        return value <= self.bound if self.at_most else value >= self.bound


def _row(rows, section, case, job, unit):
    """The row of JOB in SECTION whose case is CASE or starts with
    CASE and a space ("RAID1" is not "RAID10 ...")."""
    for r in rows:
        if (r.section == section and r.job == job and r.unit == unit and
                (r.case == case or r.case.startswith(case + " "))):
            return r
    return None


def _ratio(section, case, job, unit, peer="ceiling"):
    def figure(rows):
        r = _row(rows, section, case, job, unit)
        ratio = r and r.ratio(getattr(r, peer))
        if ratio is None:
            return None
        return Figure(ratio, r.spread if peer == "ceiling" else "")
    return figure


def _value(section, case, job, unit):
    def figure(rows):
        r = _row(rows, section, case, job, unit)
        return Figure(r.nbdraid) if r and r.nbdraid else None
    return figure


def _size(text):
    """Bytes of a chunk label: 64K, 1024K, 1M."""
    return int(text[:-1]) << {"K": 10, "M": 20}[text[-1]]


def _sweep(rows, job):
    """{chunk bytes: nbdraid's MB/s} of the chunk sweep's JOB."""
    out = {}
    for r in rows:
        if r.section == "sweep" and r.job == job and r.case.startswith("chunk "):
            out[_size(r.case.split()[1])] = r.nbdraid
    return out


def _largest_chunk_write(rows):
    """The largest chunk's write over the best chunk's."""
    w = _sweep(rows, SEQ_WRITE)
    if len(w) < 2:
        return None
    return Figure(w[max(w)] / max(w.values()))


def _largest_chunk_read(rows):
    """The largest chunk's read over the smallest chunk's: reads must
    not fall as chunks grow."""
    r = _sweep(rows, SEQ_READ)
    if len(r) < 2:
        return None
    return Figure(r[max(r)] / r[min(r)])


def _degraded(rows):
    """RAID6 with two members failed over the same array healthy."""
    failed = _row(rows, "degraded", "RAID6 2 failed", SEQ_READ, "MB/s")
    healthy = _row(rows, "degraded", "RAID6 healthy", SEQ_READ, "MB/s")
    if not (failed and healthy and healthy.nbdraid):
        return None
    return Figure(failed.nbdraid / healthy.nbdraid)


def _level(level, what, job, bound, peer="ceiling"):
    """A target on the levels section's LEVEL row of JOB, named for
    what it measures and the peer it is a ratio to."""
    unit = "IOPS" if job in (RAND_READ, RAND_WRITE) else "MB/s"
    against = "ceiling" if peer == "ceiling" else "btrfs " + level.lower()
    return Target(f"{level} {what} x {against}", bound,
                  _ratio("levels", level, job, unit, peer))


TARGETS = (
    [_level(lv, "seq read", SEQ_READ, 0.90) for lv in LEVELS] +
    [_level("RAID0", "seq write", SEQ_WRITE, 0.90),
     _level("RAID6", "seq write", SEQ_WRITE, 0.70),
     _level("RAID6", "seq write", SEQ_WRITE, 2.5, "kernel")] +
    [_level(lv, "rand read 4K", RAND_READ, 0.85) for lv in LEVELS] +
    [_level("RAID10", "rand write 4K", RAND_WRITE, 0.50),
     _level("RAID6", "rand write 4K", RAND_WRITE, 0.50),
     _level("RAID6", "rand write 4K", RAND_WRITE, 4.0, "kernel"),
     Target("sweep: largest chunk's write / best chunk's", 0.70,
            _largest_chunk_write),
     Target("sweep: largest chunk's read / smallest chunk's", 1.0,
            _largest_chunk_read),
     Target("12 readers / 1 reader", 1.0,
            _value("readers", "RAID6", "12 readers / 1 reader", "x")),
     Target("RAID6 2 failed / healthy, seq read", 0.50, _degraded),
     Target("idle rebuild x fio's member write", 0.70,
            _ratio("rebuild", "RAID6", "rebuild, idle", "MB/s")),
     Target("peak RSS (KiB)", RSS_LIMIT_KIB,
            _value("rss", "RAID6", f"after {SEQ_WRITE}, {RAND_WRITE}, "
                   f"{SEQ_READ}, 12 seq readers 1M qd1", "KiB"),
            at_most=True)])


def _spread_straddles(spread, target):
    try:
        lo, hi = (float(x) for x in spread.split("-"))
    except ValueError:
        return False
    return target.met(lo) != target.met(hi)


def evaluate(rows):
    """[(target, Figure or None, verdict)] for every target."""
    out = []
    for t in TARGETS:
        f = t.figure(rows)
        if f is None:
            verdict = "not measured"
        else:
            verdict = "met" if t.met(f.value) else "missed"
            if f.spread and _spread_straddles(f.spread, t):
                verdict += " (rounds straddle the bound)"
        out.append((t, f, verdict))
    return out


def _fmt(x):
    return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def markdown(rows):
    """The targets as a Markdown section."""
    evaluated = evaluate(rows)
    met = sum(v.startswith("met") for _, _, v in evaluated)
    measured = sum(f is not None for _, f, _ in evaluated)
    lines = ["## Targets", "",
             f"{met} of {measured} measured targets met in this run "
             f"({len(evaluated) - measured} not measured).", "",
             "| target | bound | this run | rounds | verdict |",
             "|---|--:|--:|--:|---|"]
    for t, f, verdict in evaluated:
        bound = ("<= " if t.at_most else ">= ") + _fmt(t.bound)
        lines.append(f"| {t.name} | {bound} | {_fmt(f.value) if f else ''} "
                     f"| {f.spread if f else ''} | {verdict} |")
    return "\n".join(lines) + "\n\n"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: targets.py BENCH.CSV")
    sys.stdout.write(markdown(results.read_csv(sys.argv[1])))


if __name__ == "__main__":
    main()
