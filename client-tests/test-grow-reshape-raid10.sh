#!/usr/bin/env bash
# nbdraid grow --raid-devices on a running near-2 RAID10, md's raid10
# reshape without a backup file, both ways: from 4 to 5 members with a
# spare added, under fio (crc32c verify) on the first half and killed
# with -9 half-way (the data offsets moving back a chunk or more); then
# back to 4 after grow --array-size cuts it to what four hold (the
# refusal names it), running backwards from the end, the data offsets
# moving up.  Each time the array is the size md's layout gives,
# every byte written before reads back, check finds no mismatch, the
# array assembles again the same, the members match md's layout
# (md-model.py), and at the end the fifth device is a spare.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires fio
requires mdadm
fio --enghelp 2>/dev/null | grep -qw nbd || skip "fio has no nbd engine"
. "$abs_top_srcdir/client-tests/lib/reshape-under-fio.sh"

new_array r10 10 n2 64K 4 34M --assume-clean
dir=$T/r10
array_option "speed-min = 4M" "speed-max = 4M"
start_server "$conf"
size=$(export_size)
half=$((size / 2))
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"
truncate -s 34M "$dir/d4.img"
"$NBDRAID" add "$conf" "$dir/d4.img" > /dev/null || die "add refused"

fio_on_half "$half"
out=$("$NBDRAID" grow "$conf" --raid-devices 5) || die "grow refused: $out"
echo "$out"
wait_status 30 "j['job']['kind'] == 'reshape'" || die "no reshape runs: $(status_json)"
grep -qF 'Delta Devices : 1, (4->5)' <<< "$("$NBDRAID" detail "$conf")" ||
  die "detail does not say 4->5: $("$NBDRAID" detail "$conf")"
wait "$fio_pid" || { cat "$T/fio.out" >&2; die "fio verify failed across the reshape"; }
wait_status 60 "j['job']['kind'] == 'reshape' and j['job']['done_bytes'] >= 24 * 1048576" ||
  die "the reshape did not get far: $(status_json)"
crash_mid_reshape
wait_status 60 "j['job']['kind'] == 'idle' and j['working'] == 5"
grown=$((size / 4 * 5))
[ "$(export_size)" = "$grown" ] || die "the array is $(export_size) bytes, not $grown"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the reshape: $(status_json)"
reshaped_holds "$size" "$grown" "$half" "$dir" 5
echo "ok: RAID10 grown from 4 to 5 members under fio and a kill -9, $size -> $grown bytes"

start_server "$conf"
out=$("$NBDRAID" grow "$conf" --raid-devices 4 2>&1) && die "a shrink of the whole array was accepted: $out"
cut=$(sed -n 's/.*nbdraid grow --array-size \([0-9]*\) first.*/\1/p' <<< "$out")
[ -n "$cut" ] || die "the refusal names no size: $out"
"$NBDRAID" grow "$conf" --array-size "$cut" > /dev/null || die "array-size refused"
"$NBDRAID" speed-limit "$conf" 0 0 > /dev/null
out=$("$NBDRAID" grow "$conf" --raid-devices 4) || die "grow refused: $out"
echo "$out"
"$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
wait_status 60 "j['job']['kind'] == 'idle' and j['working'] == 4"
[ "$(export_size)" = "$cut" ] || die "the array is $(export_size) bytes, not $cut"
status_is "[d['state'] for d in j['devices'] if d['role'] == -1] == ['spare']" ||
  die "the fifth device is not a spare: $(status_json)"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the shrink: $(status_json)"
cp "$T/out" "$T/data"
reshaped_holds "$cut" "$cut" 0 "$dir" 4
grep -q '^spare = .*d4.img$' "$conf" || die "d4 is no spare line: $(cat "$conf")"
echo "ok: RAID10 shrunk back to 4 members, $grown -> $cut bytes"
