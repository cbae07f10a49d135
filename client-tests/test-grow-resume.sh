#!/usr/bin/env bash
# kill -9 of the server while a grown RAID5 resyncs its new space: the
# superblocks already say the new size (mdadm --examine agrees) and how
# far the resync came; the restarted server serves the new size, goes
# on from there (not from the old end, not from 0) and finishes; check
# finds no mismatch and the old data reads back.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

new_array r5 5 left-symmetric 64K 3 34M --assume-clean
start_server "$conf"
old=$(export_size)
random_file "$T/data" "$old"
nbdcopy --flush "$T/data" "$uri"
stop_server

# Bigger members whose new space holds old bytes on every member, so
# the resync has work to do all the way; it goes at 1 MiB/s.
for m in $members; do
  truncate -s 66M "$m"
  head -c 32M /dev/urandom | dd of="$m" bs=1M seek=34 conv=notrunc status=none
done
printf 'speed-min = 1M\nspeed-max = 1M\n' > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"
start_server "$conf"
"$NBDRAID" grow "$conf" --size max > /dev/null || die "grow refused"
used=$(( (66 - 1) * 1024 * 1024 ))
new=$((2 * used))

# Past a checkpoint (every MiB here) in the new space, then kill -9.
wait_status 60 "j['job']['kind'] == 'resync' and j['job']['done_bytes'] >= $((33 + 4)) * 1048576"
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || :
server_pid=
grep -q "Array Size : $((new / 1024)) KiB" <<< "$(mdadm --examine "$T/r5/d0.img" 2>&1 || :)" ||
  ! command -v mdadm > /dev/null || die "the superblocks do not say the new size"
at=$("$NBDRAID" examine --json "$T/r5/d1.img" | /usr/bin/python3 -c '
import json, sys
print(json.load(sys.stdin)[0]["resync_offset_sectors"])')
[ "$at" -gt $((33 * 2048)) ] && [ "$at" -lt $((used / 512)) ] ||
  die "the superblocks say the resync is at sector $at"
echo "ok: killed mid-resync; the superblocks say $new bytes, resync at sector $at"

sed -i '/^speed-/d' "$conf"
start_server "$conf"
[ "$(export_size)" = "$new" ] || die "after the restart the array serves $(export_size) bytes"
"$NBDRAID" wait "$conf" > /dev/null
wait_status 60 "j['synced'] and j['job']['kind'] == 'idle'"
grep -q "resync starts at unit $((at * 512 / 65536)) of $((used / 65536))" "$T/nbdkit.log" ||
  die "the resync did not resume where it was: $(grep 'resync starts' "$T/nbdkit.log")"
"$NBDRAID" check "$conf" > /dev/null
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the resumed resync"
nbdcopy "$uri" "$T/out"
cmp -n "$old" "$T/data" "$T/out" || die "the old data changed"
echo "ok: the resync resumed at sector $at and finished; data intact"
