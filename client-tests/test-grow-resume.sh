#!/usr/bin/env bash
# kill -9 of the server while a grown RAID5 resyncs its new space: the
# superblocks already say the new size (mdadm --examine agrees).  With
# the array clean at the kill they say how far the resync came, and the
# restarted server goes on from there (not from the old end, not from
# 0); with a writer at work (the array dirty) the restarted server
# resyncs what the bitmap marks, the rest of the new space among it.
# Either way the resync finishes, check finds no mismatch (the new
# space held old bytes on every member) and the data reads back.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

# kill_mid_resync NAME clean|dirty
kill_mid_resync () {
  local name=$1 mode=$2 old used new at writer=

  new_array "$name" 5 left-symmetric 64K 3 34M --assume-clean
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
  array_option "speed-min = 1M" "speed-max = 1M"
  start_server "$conf"
  "$NBDRAID" grow "$conf" --size max > /dev/null || die "$name: grow refused"
  used=$(( (66 - 1) * 1024 * 1024 ))
  new=$((2 * used))
  if [ "$mode" = dirty ]; then    # rewrites the old data meanwhile
    rm -f "$T/stop"
    ( while [ ! -e "$T/stop" ]; do nbdcopy "$T/data" "$uri" 2> /dev/null || exit 0; done ) &
    writer=$!
  fi

  # Past a checkpoint (every MiB here) in the new space, then kill -9.
  wait_status 60 "j['job']['kind'] == 'resync' and j['job']['done_bytes'] >= $((33 + 4)) * 1048576"
  crash_server
  if [ -n "$writer" ]; then touch "$T/stop"; wait "$writer" || :; fi
  ! command -v mdadm > /dev/null ||
    grep -q "Array Size : $((new / 1024)) KiB" <<< "$(mdadm --examine "$T/$name/d0.img" 2>&1)" ||
    die "$name: the superblocks do not say the new size"
  at=$("$NBDRAID" examine --json "$T/$name/d1.img" | /usr/bin/python3 -c '
import json, sys
print(json.load(sys.stdin)[0]["resync_offset_sectors"])')
  if [ "$mode" = clean ]; then
    [ "$at" -gt $((33 * 2048)) ] && [ "$at" -lt $((used / 512)) ] ||
      die "$name: the superblocks say the resync is at sector $at"
  else
    [ "$at" = 0 ] || die "$name: dirty at the kill, yet resync_offset is $at"
  fi
  echo "ok: $name: killed mid-resync ($mode); the superblocks say $new bytes, resync at sector $at"

  sed -i '/^speed-/d' "$conf"
  start_server "$conf"
  [ "$(export_size)" = "$new" ] || die "$name: after the restart the array serves $(export_size) bytes"
  "$NBDRAID" wait "$conf" > /dev/null
  wait_status 60 "j['synced'] and j['job']['kind'] == 'idle'"
  grep -q "resync starts at unit $((at * 512 / 65536)) of $((used / 65536))" "$T/nbdkit.log" ||
    die "$name: the resync did not start where it should: $(grep 'resync starts' "$T/nbdkit.log")"
  "$NBDRAID" check "$conf" > /dev/null
  wait_status 60 "j['job']['kind'] == 'idle'"
  status_is "j['mismatches'] == 0" || die "$name: mismatches after the resumed resync"
  nbdcopy "$uri" "$T/out"
  cmp -n "$old" "$T/data" "$T/out" || die "$name: the old data changed"
  stop_server
  rm -f "$T/nbdkit.log" "$T/data" "$T/out"
  echo "ok: $name: the resync went on from sector $at and finished; data intact"
}

kill_mid_resync clean clean
kill_mid_resync dirty dirty
