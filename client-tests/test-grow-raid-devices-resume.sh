#!/usr/bin/env bash
# kill -9 of the server while the mirror nbdraid grow --raid-devices 3
# added is recovered: the superblocks already say raid_disks 3 with the
# spare in role 2 (mdadm --examine agrees) and how far its recovery
# came; the config lists three members.  Restarted, the array assembles
# and the recovery resumes from there, not from 0, and completes: check
# finds no mismatch and every byte reads back.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

new_array r1 1 - - 2 34M --assume-clean
dir=$T/r1
truncate -s 34M "$dir/s0.img"
printf 'speed-min = 1M\nspeed-max = 1M\n' > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy --flush "$T/data" "$uri"
"$NBDRAID" add "$conf" "$dir/s0.img" > /dev/null || die "add refused"
"$NBDRAID" grow "$conf" --raid-devices 3 > /dev/null || die "grow refused"
wait_status 60 "j['devices'][2]['recovered_bytes'] >= 4 * 1048576"
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || :
server_pid=

[ "$(grep -c '^member = ' "$conf")" = 3 ] || die "the config does not list three members: $(cat "$conf")"
if command -v mdadm > /dev/null; then
  mdadm --examine "$dir/s0.img" > "$T/examine" 2>&1
  grep -q "Raid Devices : 3" "$T/examine" && grep -q "Device Role : Active device 2" "$T/examine" &&
    grep -q "Recovery Offset : " "$T/examine" ||
    die "mdadm does not see the new mirror recovering in role 2: $(cat "$T/examine")"
fi

sed -i '/^speed-/d' "$conf"
start_server "$conf"
"$NBDRAID" wait "$conf" > /dev/null
resumed=$(grep -o "recovery of member 2 ($dir/s0.img) starts at [0-9]*" "$T/nbdkit.log" |
  tail -1 | grep -o '[0-9]*$')
[ "$(grep -c "recovery of member 2 ($dir/s0.img) starts at" "$T/nbdkit.log")" = 2 ] &&
  [ "$resumed" -ge $((4 * 1048576)) ] ||
  die "the recovery did not resume past 4 MiB: $(grep 'recovery of' "$T/nbdkit.log")"
wait_status 60 "j['working'] == 3 and j['job']['kind'] == 'idle'"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the resumed recovery: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data differs after the resumed recovery"
stop_server
members="$dir/d0.img $dir/d1.img $dir/s0.img"
check_members_hold "$T/data"
echo "ok: the new mirror's recovery resumed at $resumed bytes after kill -9"
