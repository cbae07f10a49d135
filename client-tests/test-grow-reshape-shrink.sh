#!/usr/bin/env bash
# nbdraid grow --raid-devices 4 on a running 5-member RAID5, md's
# shrink without a backup file: refused while the array is bigger than
# four members hold, the refusal naming the size (nothing changes);
# nbdraid grow --array-size cuts it (new connections see the new size,
# a request past it fails); the reshape then runs backwards from the
# end, each member's data moving up a chunk, under fio (crc32c verify)
# on the first half, killed with -9 half-way and resumed.  At the end
# the array keeps its cut size and every byte, the fifth device is a
# spare (config, status, mdadm --examine), check finds no mismatch, the
# array assembles again the same, and the four members match md's
# layout (md-model.py).  With SHRINK_LEVEL=6
# (test-grow-reshape-shrink-raid6.sh), a 6-member RAID6 gives up one,
# and the device it drops fails half-way: the reshape goes on without
# it (its chunks computed from the rest of their old stripes), and it
# is faulty, not a spare, at the end.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires nbdsh
requires fio
requires mdadm
fio --enghelp 2>/dev/null | grep -qw nbd || skip "fio has no nbd engine"
. "$abs_top_srcdir/client-tests/lib/reshape-under-fio.sh"

level=${SHRINK_LEVEL:-5}
n=$((level == 5 ? 5 : 6)) k=$((level == 5 ? 4 : 5))
data=$((k - level + 4))
new_array r$level "$level" left-symmetric 64K "$n" 34M --assume-clean
dir=$T/r$level
array_option "speed-min = 4M" "speed-max = 4M"
start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"
offset0=$(mdadm --examine "$dir/d0.img" 2>/dev/null | sed -n 's/ *Data Offset : \([0-9]*\) sectors/\1/p')

cp "$conf" "$T/conf.before"
if out=$("$NBDRAID" grow "$conf" --raid-devices "$k" 2>&1); then
  die "a shrink of the whole array was not refused: $out"
fi
echo "$out"
[ "$(wc -l <<< "$out")" = 1 ] || die "not a one-line refusal: $out"
cut=$(sed -n 's/.*nbdraid grow --array-size \([0-9]*\) first.*/\1/p' <<< "$out")
[ -n "$cut" ] || die "the refusal names no size: $out"
cmp -s "$conf" "$T/conf.before" || die "the refusal changed the config"
status_is "j['job']['kind'] == 'idle' and j['members'] == $n" || die "the refusal changed the array: $(status_json)"
out=$("$NBDRAID" grow "$conf" --array-size 1G 2>&1) && die "an array size past the end was accepted: $out"
grep -q "more than array" <<< "$out" || die "unclear refusal: $out"

out=$("$NBDRAID" grow "$conf" --array-size "$cut") || die "array-size refused: $out"
echo "$out"
[ "$(export_size)" = "$cut" ] || die "a new connection sees $(export_size) bytes, not $cut"
nbdsh -u "$uri" -c "
try:
    h.pread(512, $cut)
    raise SystemExit('a read past the cut size worked')
except nbd.Error:
    pass
" || die "a read past the array size did not fail"

half=$((cut / 2))
fio_on_half "$half"
[ "$cut" = $(((size / (n - level + 4) - 65536) * data)) ] ||
  die "the refusal names $cut bytes, not what $k members hold"
uuid=$(status_json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["uuid"])')
out=$("$NBDRAID" grow "$conf" --raid-devices "$k") || die "grow refused: $out"
echo "$out"
wait_status 30 "j['job']['kind'] == 'reshape'" || die "no reshape runs: $(status_json)"
# The superblock that speaks for the array is a kept role's now.
status_is "j['uuid'] == '$uuid' and j['events'] > 0" ||
  die "status lost the array's superblock: $(status_json)"
st=$("$NBDRAID" detail "$conf")
grep -qF "Delta Devices : -1, ($n->$k)" <<< "$st" || die "detail does not say $n->$k: $st"
grep -q "^spare = .*d$k.img\$" "$conf" && [ "$(grep -c '^member = ' "$conf")" = "$k" ] ||
  die "the config does not list $k members and the spare: $(cat "$conf")"
status_is "j['reshape_from']['members'] == $n" || die "status: $(status_json)"
status_is "[d['role'] for d in j['devices']] == list(range($n))" ||
  die "the dropped device is not listed in its role: $(status_json)"
out=$("$NBDRAID" remove "$conf" "$dir/d$k.img" 2>&1) && die "the dropped device was removed mid-reshape: $out"
echo "$out"
wait "$fio_pid" || { cat "$T/fio.out" >&2; die "fio verify failed across the reshape"; }
wait_status 60 "j['job']['kind'] == 'reshape' and j['job']['done_bytes'] >= 12 * 1048576" ||
  die "the reshape did not get half-way: $(status_json)"
dropped=spare
if [ "$level" = 6 ]; then
  "$NBDRAID" fail "$conf" "$k" > /dev/null || die "fail of the dropped role refused"
  dropped=faulty
fi
crash_mid_reshape
wait_status 60 "j['job']['kind'] == 'idle' and j['working'] == $k"
grep -q "reshape finished: $k members" "$T/nbdkit.log" || die "no reshape finished in the log"
[ "$(export_size)" = "$cut" ] || die "the array is $(export_size) bytes, not $cut"
status_is "[d['state'] for d in j['devices'] if d['role'] == -1] == ['$dropped']" ||
  die "the dropped device is not $dropped: $(status_json)"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the reshape: $(status_json)"
reshaped_holds "$cut" "$cut" "$half" "$dir" "$k"
for m in $members; do
  mdadm --examine "$m" > "$T/examine" 2>&1
  grep -q "Raid Devices : $k" "$T/examine" && ! grep -q "Reshape" "$T/examine" ||
    die "mdadm --examine $m: $(cat "$T/examine")"
  offset=$(sed -n 's/ *Data Offset : \([0-9]*\) sectors/\1/p' "$T/examine")
  [ "$offset" = $((offset0 + 128)) ] || die "$m: data offset $offset, not $offset0 + 128"
done
if [ "$dropped" = spare ]; then
  mdadm --examine "$dir/d$k.img" | grep -q "Device Role : spare" ||
    die "d$k is not a spare: $(mdadm --examine "$dir/d$k.img")"
fi
echo "ok: RAID$level shrunk from $n to $k members under fio and a kill -9, $size -> $cut bytes"
