#!/usr/bin/env bash
# A RAID5 becomes a RAID6 of the usual layout, as mdadm --grow --level=6
# does it: grow --level 6 (md's raid6_takeover: the spare becomes Q of
# left-symmetric-6, only it built), then grow --layout left-symmetric
# restripes the data so that P and Q rotate over every member, under a
# writer.  At the end the status, the config and the superblocks
# (mdadm --examine) say a left-symmetric RAID6, every byte reads back,
# a check finds no mismatch and the members match md's layout.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

new_array r5 5 left-symmetric 64K 3 34M --assume-clean
dir=$T/r5
truncate -s 34M "$dir/d3.img"
array_option "speed-min = 4M" "speed-max = 4M"
start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"
"$NBDRAID" add "$conf" "$dir/d3.img" > /dev/null || die "add refused"
"$NBDRAID" grow "$conf" --level 6 > /dev/null || die "grow --level 6 refused"
"$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
status_is "j['layout'] == 'left-symmetric-6'" || die "not RAID6 -6: $(status_json)"

rm -f "$T/stop"
( while [ ! -e "$T/stop" ]; do nbdcopy "$T/data" "$uri" || exit 1; done ) &
writer=$!
out=$("$NBDRAID" grow "$conf" --layout left-symmetric) || die "grow --layout refused: $out"
echo "$out"
wait_status 30 "j['job']['kind'] == 'reshape'" || die "no reshape runs: $(status_json)"
sleep 2
"$NBDRAID" speed-limit "$conf" 0 0 > /dev/null
"$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
touch "$T/stop"
wait "$writer" || die "the writer failed across the reshape"
wait_status 60 "j['job']['kind'] == 'idle' and j['working'] == 4"
status_is "j['level'] == 6 and j['layout'] == 'left-symmetric'" || die "status: $(status_json)"
grep -qx "level = 6" "$conf" && grep -qx "layout = left-symmetric" "$conf" ||
  die "the config does not say a left-symmetric RAID6: $(cat "$conf")"
[ "$(export_size)" = "$size" ] || die "the array is $(export_size) bytes, not $size"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "the data differs after the restripe"
stop_server
members=$(member_paths "$dir" 4)
check_members_hold "$T/data"
if command -v mdadm > /dev/null; then
  mdadm --examine "$dir/d0.img" > "$T/examine" 2>&1
  grep -q "Raid Level : raid6" "$T/examine" && grep -q "Layout : left-symmetric$" "$T/examine" ||
    die "mdadm does not see a left-symmetric RAID6: $(cat "$T/examine")"
fi
echo "ok: RAID5 -> RAID6 -6 -> left-symmetric RAID6 under a writer"
