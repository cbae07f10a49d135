#!/usr/bin/env bash
# kill -9 of the server while the Q disk of a RAID5 taken to RAID6
# (grow --level 6) is built: the superblocks already say RAID6,
# left-symmetric-6, four members, the new one recovering (mdadm
# --examine agrees), and the config says so too.  Restarted, the array
# assembles as RAID6 and the recovery resumes past where it was, not
# from 0, and completes: check finds no mismatch, every byte reads back
# and the members match md's layout.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

new_array r5 5 left-symmetric 64K 3 34M --assume-clean
dir=$T/r5
truncate -s 34M "$dir/d3.img"
printf 'speed-min = 1M\nspeed-max = 1M\n' > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy --flush "$T/data" "$uri"
"$NBDRAID" add "$conf" "$dir/d3.img" > /dev/null || die "add refused"
"$NBDRAID" grow "$conf" --level 6 > /dev/null || die "grow --level 6 refused"
wait_status 60 "j['devices'][3]['recovered_bytes'] >= 4 * 1048576"
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || :
server_pid=

grep -qx "level = 6" "$conf" && grep -qx "layout = left-symmetric-6" "$conf" &&
  [ "$(grep -c '^member = ' "$conf")" = 4 ] || die "the config does not say RAID6: $(cat "$conf")"
if command -v mdadm > /dev/null; then
  mdadm --examine "$dir/d3.img" > "$T/examine" 2>&1
  grep -q "Raid Level : raid6" "$T/examine" && grep -q "Raid Devices : 4" "$T/examine" &&
    grep -q "Device Role : Active device 3" "$T/examine" && grep -q "Recovery Offset : " "$T/examine" ||
    die "mdadm does not see the Q disk recovering: $(cat "$T/examine")"
fi

sed -i '/^speed-/d' "$conf"
start_server "$conf"
"$NBDRAID" wait "$conf" > /dev/null
resumed=$(grep -o "recovery of member 3 ($dir/d3.img) starts at [0-9]*" "$T/nbdkit.log" |
  tail -1 | grep -o '[0-9]*$')
[ "$(grep -c "recovery of member 3 ($dir/d3.img) starts at" "$T/nbdkit.log")" = 2 ] &&
  [ "$resumed" -ge $((4 * 1048576)) ] ||
  die "the recovery did not resume past 4 MiB: $(grep 'recovery of' "$T/nbdkit.log")"
wait_status 60 "j['working'] == 4 and j['job']['kind'] == 'idle'"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the resumed recovery: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data differs after the resumed recovery"
stop_server
members="$dir/d0.img $dir/d1.img $dir/d2.img $dir/d3.img"
check_members_hold "$T/data"
echo "ok: the Q disk's recovery resumed at $resumed bytes after kill -9"
