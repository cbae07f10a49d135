#!/usr/bin/env bash
# A mirror reads its near copy: RAID1 of a local file and an NBD member
# 2 ms away (nbdkit's delay filter) sends nearly every read to the
# local file once both copies' read times are known.  nbdkit's stats
# filter counts the far member's reads against the array's: under 5%
# (its probes, and the reads before its time was known), and every
# byte reads back as written.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdsh
nbdkit --filter=stats --filter=delay null --dump-plugin > /dev/null 2>&1 ||
  skip "nbdkit has no stats or delay filter"

mkdir -p "$T/w"
truncate -s 64M "$T/w/local.img" "$T/w/far.img"
start_member far "$T/w/far.img" --filter=stats --filter=delay -- \
  rdelay=2ms wdelay=2ms statsfile="$T/far.stats"
conf=$T/w/a.conf
write_config "$conf" 1 - - "$T/w/local.img" "$member_uri"
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create: $(cat "$T/create.log")"

nbdkit_opts=(--filter=stats)
start_server "$conf" statsfile="$T/array.stats"
random_file "$T/data" 16M
nbdcopy "$T/data" "$uri"
# Reads one at a time (the first ones measure both copies), then
# nbdcopy's parallel ones, then random 4K reads, each checked.
DATA=$T/data nbdsh -u "$uri" -c '
import os
data = open(os.environ["DATA"], "rb").read()
def check(off, n):
    if h.pread(n, off) != data[off:off + n]:
        raise SystemExit("FAIL: read back differs at %d+%d" % (off, n))
for i in range(8):
    check(i * 65536, 4096)
' || die "first reads"
nbdcopy --connections=4 "$uri" "$T/back"
cmp -n 16M "$T/data" "$T/back" || die "nbdcopy read back differs"
DATA=$T/data nbdsh -u "$uri" -c '
import os, random
data = open(os.environ["DATA"], "rb").read()
for i in range(3000):
    off = random.randrange(len(data) // 4096) * 4096
    if h.pread(4096, off) != data[off:off + 4096]:
        raise SystemExit("FAIL: read back differs at %d" % off)
' || die "random reads"
stop_server

# The stats filter writes its file when nbdkit exits.
kill -TERM "${member_pids[far]}"
wait_for 10 test -s "$T/far.stats" || die "no stats from the far member"
test -s "$T/array.stats" || die "no stats from the array"
# read_ops FILE: the read requests a stats file counts.
read_ops () { sed -n 's/^read: \([0-9]*\) ops.*/\1/p' "$1"; }
far=$(read_ops "$T/far.stats")
all=$(read_ops "$T/array.stats")
[ -n "$far" ] || far=0
[ -n "$all" ] && [ "$all" -ge 3000 ] ||
  die "the array counted ${all:-no} reads: $(cat "$T/array.stats")"
[ $((far * 20)) -lt "$all" ] ||
  die "the far member served $far reads of $all"
echo "ok: the far member served $far of $all reads"
