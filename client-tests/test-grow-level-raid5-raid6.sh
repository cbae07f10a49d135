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
. "$abs_top_srcdir/client-tests/lib/level-change.sh"
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
members="$dir/d0.img $dir/d1.img $dir/d2.img $dir/d3.img"

# The monitor sees the Q disk built, as any recovery.
"$NBDRAID" monitor "$conf" --no-reconnect > "$T/mon.out" 2> "$T/mon.err" &
mon=$!
cleanup_fn "kill $mon 2>/dev/null"
wait_for 10 grep -q "^monitoring array test" "$T/mon.out" ||
  die "the monitor did not subscribe: $(cat "$T/mon.out" "$T/mon.err")"
level_change 6
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

level_change 5
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
