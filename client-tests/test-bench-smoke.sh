#!/usr/bin/env bash
# The benchmark runs end to end (client-tests/bench/run --quick) and
# writes bench.md and bench.csv with a row for every job it should have
# measured, each with a number for nbdraid.  No timing is asserted.
. "$(dirname "$0")/lib.sh"
requires nbdkit
# The bench installs what it misses (as root); without fio it cannot run.
"$abs_top_srcdir/client-tests/bench/install-tools" > /dev/null 2>&1 || :
requires fio
fio --enghelp 2>/dev/null | grep -qw nbd || skip "fio has no nbd engine"

# check_rows OUT EXPECTED: OUT/bench.csv has a row for each
# "section,job[,case prefix]" line of EXPECTED (CSV), each with a
# positive number for nbdraid, and OUT/bench.md a row for each job.
check_rows () {
  /usr/bin/python3 - "$1/bench.csv" "$1/bench.md" "$2" <<'PY' ||
import csv, io, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
md = open(sys.argv[2]).read()
bad = []
for want in csv.reader(io.StringIO(sys.argv[3])):
    section, job, case = (want + [""])[:3]
    mine = [r for r in rows if r["section"] == section and
            r["job"].startswith(job) and r["case"].startswith(case)]
    if not mine:
        bad.append(f"no CSV row for {section} / {case} / {job}")
    for r in mine:
        try:
            if not math.isfinite(float(r["nbdraid"])) or float(r["nbdraid"]) <= 0:
                raise ValueError
        except ValueError:
            bad.append(f"{section} / {case} / {job} / {r['metric']}: nbdraid "
                       f"is {r['nbdraid']!r}, not a positive number")
    if f"| {job}" not in md:
        bad.append(f"bench.md has no row for {section} / {job}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
    die "bench output incomplete (above)"
}

# btrfs stays out: its replace has wedged a kernel here, and a smoke
# test must not be able to hang the suite.
"$abs_top_srcdir/client-tests/bench/run" --quick --no-build --no-kernel-peer \
  --out "$T/out" > "$T/bench.log" 2>&1 ||
  { tail -30 "$T/bench.log" >&2; die "bench --quick failed"; }
[ -s "$T/out/bench.md" ] || die "no bench.md"
[ -s "$T/out/bench.csv" ] || die "no bench.csv"
# The targets table leads, one row per target (test-bench-targets.sh
# checks its judgements).
grep -q '^## Targets' "$T/out/bench.md" || die "bench.md has no targets table"
grep -q '^| sweep: largest chunk.s write / best chunk.s | >= 0.7 | [0-9.]* |' \
  "$T/out/bench.md" || die "bench.md: the sweep's write target is not measured"

# section,job pairs --quick must report (the sections' quick subsets).
expected='levels,seq write 1M qd16
levels,seq read 1M qd16
levels,rand write 4K qd32
levels,rand read 4K qd32
sweep,seq write 1M qd16
sweep,seq read 1M qd16
readers,12 seq readers 1M qd1
readers,1 seq reader 1M qd1
readers,12 readers / 1 reader
degraded,seq read 1M qd16
degraded,rand read 4K qd32
rebuild,"rebuild, idle"
rebuild,"rebuild, idle, all written"
rebuild,"rebuild, under client load"
rebuild,"check, idle, all written"
rebuild,"initial resync, idle"
rebuild,rand read 4K qd32
reshape,"reshape, idle"
reshape,"rebuild, idle"
reshape,"reshape, under rand read 4K qd16"
reshape,rand read 4K qd16
reshape,"reshape, under seq write 1M qd16"
reshape,seq write 1M qd16
bitmap,seq write 1M qd16
bitmap,rand write 4K qd32
journal,rand write 4K qd32
nested,seq read 1M qd16
latency,seq read 1M qd16
latency,rand read 4K qd32
latency,rand read 4K qd1
rss,after seq write 1M qd16
'
check_rows "$T/out" "$expected"
echo "ok: bench --quick wrote $(($(wc -l < "$T/out/bench.csv") - 1)) rows"

# The disks section (opt-in, members that sleep), tiny: one level on 4
# disk-like members, its rebuild, and as root the same on 4 throttled
# loop devices (without btrfs, as above).
"$abs_top_srcdir/client-tests/bench/run" --quick --no-build --no-kernel-peer \
  --only disks --disk-members 4 --disk-levels 5 --out "$T/disks" \
  > "$T/disks.log" 2>&1 ||
  { tail -30 "$T/disks.log" >&2; die "bench --quick --only disks failed"; }
expected='disks,seq write 1M qd16,disk RAID5
disks,seq read 1M qd16,disk RAID5
disks,12 seq readers 1M qd1,disk RAID5
disks,rand read 4K qd32,disk RAID5
disks,rand write 4K qd32,disk RAID5
disks,"rebuild, idle",disk RAID5
disks,"rebuild, under client load",disk RAID5
'
if [ "$(id -u)" = 0 ] && [ -e /dev/loop-control ] &&
   [ -e /sys/fs/cgroup/blkio/blkio.throttle.read_bps_device ]; then
  expected+='disks,seq write 1M qd16,loop RAID5
disks,seq read 1M qd16,loop RAID5
disks,rand write 4K qd32,loop RAID5
'
fi
check_rows "$T/disks" "$expected"
echo "ok: bench --quick --only disks wrote $(($(wc -l < "$T/disks/bench.csv") - 1)) rows"
