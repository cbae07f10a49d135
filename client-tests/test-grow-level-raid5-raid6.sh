#!/usr/bin/env bash
# nbdraid grow --level 6 on a running 3-member RAID5 with a spare,
# under a writer (md's raid6_takeover): the spare becomes member 3 and
# only it is built, as Q of the -6 layout (left-symmetric-6: the RAID5
# layout on members 0-2, Q always on 3); then --level 5 back (md's
# raid5_takeover_raid6): member 3 leaves the roles and is a spare.
# The monitor reports the Q disk's recovery as any (RebuildStarted ...
# SpareActive).  After each change the superblocks (mdadm --examine),
# the status and the config say the new level, layout and members;
# every byte reads back, a check finds no mismatch, the array assembles
# again from the rewritten config and the members match md's layout
# (md-model.py).
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

new_array r5 5 left-symmetric 64K 3 34M --assume-clean
dir=$T/r5
truncate -s 34M "$dir/d3.img"
start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"
"$NBDRAID" add "$conf" "$dir/d3.img" > /dev/null || die "add refused"

# change LEVEL: grow --level under a writer, then check it all.
change () {
  local level=$1 out writer
  rm -f "$T/stop"
  ( while [ ! -e "$T/stop" ]; do nbdcopy "$T/data" "$uri" || exit 1; done ) &
  writer=$!
  sleep 0.5
  out=$("$NBDRAID" grow "$conf" --level "$level") || die "grow --level $level refused: $out"
  echo "$out"
  "$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
  sleep 0.3
  touch "$T/stop"
  wait "$writer" || die "the writer failed across the change to RAID$level"
  wait_status 60 "j['level'] == $level and j['job']['kind'] == 'idle' and j['working'] == j['members']"
  "$NBDRAID" check "$conf" > /dev/null || die "check refused"
  wait_status 60 "j['job']['kind'] == 'idle'"
  status_is "j['mismatches'] == 0" || die "mismatches as RAID$level: $(status_json)"
  nbdcopy "$uri" "$T/out"
  cmp "$T/data" "$T/out" || die "data differs as RAID$level"
  stop_server
  members="$dir/d0.img $dir/d1.img $dir/d2.img $dir/d3.img"
  check_members_hold "$T/data"
  start_server "$conf"
  [ "$(export_size)" = "$size" ] || die "RAID$level does not assemble from the config"
  nbdcopy "$uri" "$T/out"
  cmp "$T/data" "$T/out" || die "data differs after the restart as RAID$level"
}

# The monitor sees the Q disk built, as any recovery.
"$NBDRAID" monitor "$conf" --no-reconnect > "$T/mon.out" 2> "$T/mon.err" &
mon=$!
cleanup_fn "kill $mon 2>/dev/null"
wait_for 10 grep -q "^monitoring array test" "$T/mon.out" ||
  die "the monitor did not subscribe: $(cat "$T/mon.out" "$T/mon.err")"
change 6
grep -q "RebuildStarted test $dir/d3.img recovery" "$T/mon.out" &&
  grep -q "RebuildFinished test $dir/d3.img recovery" "$T/mon.out" &&
  grep -q "SpareActive test $dir/d3.img" "$T/mon.out" ||
  die "the monitor did not see the Q disk built: $(cat "$T/mon.out")"
grep -q "recovery of member 3 ($dir/d3.img) starts at 0" "$T/nbdkit.log" ||
  die "the Q disk was not recovered: $(grep -i recovery "$T/nbdkit.log")"
status_is "j['members'] == 4 and j['layout'] == 'left-symmetric-6'" ||
  die "status: $(status_json)"
grep -qx "level = 6" "$conf" && grep -qx "layout = left-symmetric-6" "$conf" &&
  [ "$(grep -c '^member = ' "$conf")" = 4 ] && ! grep -q '^spare' "$conf" ||
  die "the config does not say a 4-member RAID6: $(cat "$conf")"
if command -v mdadm > /dev/null; then
  mdadm --examine "$dir/d3.img" > "$T/examine" 2>&1
  grep -q "Raid Level : raid6" "$T/examine" && grep -q "Layout : left-symmetric-6" "$T/examine" &&
    grep -q "Raid Devices : 4" "$T/examine" && grep -q "Device Role : Active device 3" "$T/examine" ||
    die "mdadm does not see the RAID6: $(cat "$T/examine")"
fi
echo "ok: RAID5 -> RAID6 under a writer, only the Q disk built"

change 5
status_is "j['members'] == 3 and j['layout'] == 'left-symmetric'" ||
  die "status: $(status_json)"
grep -qx "level = 5" "$conf" && grep -qx "layout = left-symmetric" "$conf" &&
  [ "$(grep -c '^member = ' "$conf")" = 3 ] && grep -qx "spare = $dir/d3.img" "$conf" ||
  die "the config does not say a 3-member RAID5 and a spare: $(cat "$conf")"
if command -v mdadm > /dev/null; then
  mdadm --examine "$dir/d3.img" > "$T/examine" 2>&1
  grep -q "Raid Level : raid5" "$T/examine" && grep -q "Device Role : spare" "$T/examine" ||
    die "mdadm does not see d3 as the RAID5's spare: $(cat "$T/examine")"
fi
stop_server
echo "ok: RAID6 -> RAID5 under a writer, the Q disk a spare"
