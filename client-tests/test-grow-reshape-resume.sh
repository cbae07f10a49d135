#!/usr/bin/env bash
# kill -9 of the server in the middle of a RAID5 reshape from 4 to 5
# members, twice: early (within the first 2 MiB of each member, where
# the windows are bounded by the room the data offset moved back), with
# no client write; and later, half-way, with crash-writer.py's flushed
# and FUA writes in flight all over the array (those between the
# superblocks' reshape_position and the front make the superblocks
# catch up first).  Each time the superblocks record the reshape
# (mdadm --examine agrees), the restarted server resumes it from there,
# not from 0, and every byte is what it should be: each crash-writer
# slot either its old bytes or the new ones (or, for a write the kill
# cut short, each byte one or the other), and the new ones wherever
# the writer had its write acknowledged as durable.  At the end the
# reshape completes, check finds no mismatch and the members match
# md's layout for 5 members.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires python3
python3 -c 'import nbd' 2>/dev/null || skip "python3 nbd module missing"
WRITER="/usr/bin/python3 $abs_top_srcdir/client-tests/crash-writer.py"

new_array r5 5 left-symmetric 64K 4 34M --assume-clean
dir=$T/r5
truncate -s 34M "$dir/d4.img"
printf 'speed-min = 2M\nspeed-max = 2M\n' > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"
start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"
"$NBDRAID" add "$conf" "$dir/d4.img" > /dev/null || die "add refused"
"$NBDRAID" grow "$conf" --raid-devices 5 > /dev/null || die "grow refused"

# resumed_at: the new stripe the last restart resumed the reshape at.
resumed_at () {
  grep -o "reshape from 4 to 5 members resumes at new stripe [0-9]*" "$T/nbdkit.log" |
    tail -1 | grep -o '[0-9]*$'
}

# Early: past the first checkpoints (the first windows may reach no
# further than the room the data offsets moved back by, here 15
# chunks; the superblocks then catch up), still in the first 2 MiB.
wait_status 30 "j['job']['kind'] == 'reshape' and j['job']['done_bytes'] >= 1536 * 1024" ||
  die "the reshape did not start: $(status_json)"
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || :
server_pid=
if command -v mdadm > /dev/null; then
  mdadm --examine "$dir/d4.img" > "$T/examine" 2>&1
  grep -q "Reshape pos" "$T/examine" && grep -q "Delta Devices : 1 (4->5)" "$T/examine" &&
    grep -q "Raid Devices : 5" "$T/examine" ||
    die "mdadm does not see the reshape: $(cat "$T/examine")"
fi
[ "$(grep -c '^member = ' "$conf")" = 5 ] || die "the config does not list five members: $(cat "$conf")"
start_server "$conf"
early=$(resumed_at)
[ -n "$early" ] && [ "$early" -gt 0 ] || die "the reshape did not resume past 0: $(grep reshape "$T/nbdkit.log")"
[ "$(export_size)" = "$size" ] || die "mid-reshape the array is $(export_size) bytes, not $size"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data differs after the early kill"
echo "ok: early kill -9, resumed at new stripe $early, data intact"

# Later: half-way, with writes in flight.
wait_status 60 "j['job']['kind'] == 'reshape' and j['job']['done_bytes'] >= 16 * 1048576" ||
  die "the reshape did not get half-way: $(status_json)"
$WRITER write "$uri" "$T/ledger" 7 100000 200 "$server_pid" || die "crash-writer failed"
wait "$server_pid" 2>/dev/null || :
server_pid=
sed -i '/^speed-/d' "$conf"
start_server "$conf"
later=$(resumed_at)
[ "$later" -gt "$early" ] || die "the second resume ($later) is not past the first ($early)"
$WRITER verify "$uri" "$T/ledger" || die "flushed writes lost in the crash"
"$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
wait_status 60 "j['job']['kind'] == 'idle' and j['working'] == 5"
new=$(export_size)
[ "$new" = $((size / 3 * 4)) ] || die "the array is $new bytes, not $((size / 3 * 4))"
nbdcopy "$uri" "$T/out"
python3 - "$T/data" "$T/out" "$T/ledger" "$abs_top_srcdir/client-tests" <<'EOF2' || die "data wrong after the resumed reshape"
import sys
sys.path.insert(0, sys.argv[4])
import importlib.util
spec = importlib.util.spec_from_file_location("cw", sys.argv[4] + "/crash-writer.py")
old, out = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
durable = {int(l.split()[1]) for l in open(sys.argv[3])}
src = open(sys.argv[4] + "/crash-writer.py").read().split('\nif sys.argv[1] == "write":')[0]
cw = {}
exec(src, cw)
SLOT = cw["SLOT"]
n = len(old) // SLOT
for i in range(n):
    got, was = out[i * SLOT:(i + 1) * SLOT], old[i * SLOT:(i + 1) * SLOT]
    new = cw["content"](7, i)
    if got == new or got == was:
        continue
    if i in durable:
        sys.exit("slot %d lost its durable write" % i)
    # A write cut short by the kill may have landed in part: each byte
    # is then the old one or the writer's.
    if any(got[j] != was[j] and got[j] != new[j] for j in range(SLOT)):
        sys.exit("slot %d holds bytes neither old nor the writer's" % i)
if out[n * SLOT:len(old)] != old[n * SLOT:]:
    sys.exit("the bytes past the last slot changed")
if out[len(old):] != bytes(len(out) - len(old)):
    sys.exit("the new space is not zeros")
print("ok: %d slots checked, %d durable writes kept" % (n, len(durable)))
EOF2
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the resumed reshape: $(status_json)"
stop_server
members="$dir/d0.img $dir/d1.img $dir/d2.img $dir/d3.img $dir/d4.img"
check_members_hold "$T/out"
rm -f "$T/data" "$T/out" "$T/model.img"
echo "ok: kill -9 half-way with writes in flight, resumed at new stripe $later, done"
