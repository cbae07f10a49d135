#!/usr/bin/env bash
# The benchmark's targets table (client-tests/bench/targets.py) judges
# figures right: figures written to a bench.csv and read back are met,
# missed, straddling or not measured exactly at their bounds, and the
# command line prints the table.  No fio, no servers: known numbers in.
. "$(dirname "$0")/lib.sh"
requires python3
bench=$abs_top_srcdir/client-tests/bench

python3 - "$bench" "$T/bench.csv" <<'PY' || die "targets judged wrongly (above)"
import sys
sys.path.insert(0, sys.argv[1])
import results, targets
from results import Row

def row(section, case, job, unit, mine, ceiling=None, kernel=None, spread=""):
    return Row(section, case, job, "m", unit, mine, ceiling, kernel,
               spread=spread)

rows = [
    row("levels", "RAID0 6x320M chunk 128K", "seq read 1M qd16", "MB/s", 950, 1000),
    # RAID1 must not take RAID10's row, nor RAID10 RAID1's.
    row("levels", "RAID10 6x320M chunk 128K", "seq read 1M qd16", "MB/s", 500, 1000),
    row("levels", "RAID1 6x320M", "seq read 1M qd16", "MB/s", 900, 1000),
    row("levels", "RAID5 6x320M chunk 128K", "seq read 1M qd16", "MB/s", 899, 1000,
        spread="0.85-0.95"),
    row("levels", "RAID6 6x320M chunk 128K", "rand write 4K qd32", "us", 5, 1, 1),
    row("levels", "RAID6 6x320M chunk 128K", "rand write 4K qd32", "IOPS", 500, 1000, 125),
    row("sweep", "chunk 32K", "seq write 1M qd16", "MB/s", 1000),
    row("sweep", "chunk 64K", "seq write 1M qd16", "MB/s", 2000),
    row("sweep", "chunk 1024K", "seq write 1M qd16", "MB/s", 1399),
    row("sweep", "chunk 32K", "seq read 1M qd16", "MB/s", 1000),
    row("sweep", "chunk 1024K", "seq read 1M qd16", "MB/s", 1000),
    row("degraded", "RAID6 healthy", "seq read 1M qd16", "MB/s", 2000),
    row("rebuild", "RAID6 6x1024M chunk 512K", "rebuild, idle", "MB/s", 699, 1000),
    row("degraded", "RAID6 2 failed", "seq read 1M qd16", "MB/s", 1000),
    row("rss", "RAID6 16x128M chunk 1024K", "after seq write 1M qd16, rand "
        "write 4K qd32, seq read 1M qd16, 12 seq readers 1M qd1", "KiB",
        262145),
]
results.write_csv(sys.argv[2], rows)
got = {t.name: (f.value if f else None, v)
       for t, f, v in targets.evaluate(results.read_csv(sys.argv[2]))}
want = {
    "RAID0 seq read x ceiling": (0.95, "met"),
    "RAID1 seq read x ceiling": (0.90, "met"),
    "RAID10 seq read x ceiling": (0.50, "missed"),
    "RAID5 seq read x ceiling": (0.899, "missed (rounds straddle the bound)"),
    "RAID6 seq read x ceiling": (None, "not measured"),
    "RAID6 rand write 4K x ceiling": (0.50, "met"),
    "RAID6 rand write 4K x btrfs raid6": (4.0, "met"),
    "sweep: largest chunk's write / best chunk's": (0.6995, "missed"),
    "sweep: largest chunk's read / smallest chunk's": (1.0, "met"),
    "RAID6 2 failed / healthy, seq read": (0.50, "met"),
    "peak RSS (KiB)": (262145, "missed"),
    "idle rebuild x fio's member write": (0.699, "missed"),
}
bad = []
for name, (value, verdict) in want.items():
    if name not in got:
        bad.append(f"no target {name!r}")
        continue
    v, d = got[name]
    if d != verdict or (value is None) != (v is None) or \
            (v is not None and abs(v - value) > 1e-9):
        bad.append(f"{name}: got {v} {d!r}, want {value} {verdict!r}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY

out=$(python3 "$bench/targets.py" "$T/bench.csv") || die "targets.py failed"
grep -q '^## Targets' <<<"$out" || die "targets.py printed no table: $out"
grep -q '^| RAID0 seq read x ceiling | >= 0.9 | 0.95 |  | met |$' <<<"$out" ||
  die "targets.py: no RAID0 row as expected: $out"
grep -q '^| peak RSS (KiB) | <= 262144 | 262145 |  | missed |$' <<<"$out" ||
  die "targets.py: no RSS row as expected: $out"
if usage=$(python3 "$bench/targets.py" 2>&1); then
  die "targets.py without a file succeeded"
fi
[ "$usage" = "usage: targets.py BENCH.CSV" ] ||
  die "targets.py without a file says '$usage', not how to call it"
echo "ok: targets judged at their bounds"
