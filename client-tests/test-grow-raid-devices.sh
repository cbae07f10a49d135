#!/usr/bin/env bash
# nbdraid grow --raid-devices on a running 2-mirror RAID1 under a
# writer: to 4 the array's two spares take the new roles and are
# recovered (the superblocks say raid_disks 4 at once, the config's
# spare lines become member lines); then back to 2, once two mirrors
# were failed and removed, as md requires (it refuses with mirrors in
# use).  After each change every byte reads back, a check finds no
# mismatch, the array assembles again from the rewritten config, and
# the members match md's layout (md-model.py) for the new count.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

new_array r1 1 - - 2 34M --assume-clean
dir=$T/r1
truncate -s 34M "$dir/s0.img" "$dir/s1.img"
start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"

# One spare is too few for four mirrors: refused, nothing changes.
"$NBDRAID" add "$conf" "$dir/s0.img" > /dev/null || die "add s0 refused"
out=$("$NBDRAID" grow "$conf" --raid-devices 4 2>&1) &&
  die "grow to 4 with one spare was accepted: $out"
[ "$out" = "nbdraid: array test needs 2 spares, array has 1 (add them with nbdraid add first)" ] ||
  die "wrong refusal: $out"
status_is "len([d for d in j['devices'] if d['role'] >= 0]) == 2" ||
  die "the refused grow changed the array: $(status_json)"
"$NBDRAID" add "$conf" "$dir/s1.img" > /dev/null || die "add s1 refused"

# 2 -> 4 under a writer that rewrites the same data over and over.
rm -f "$T/stop"
( while [ ! -e "$T/stop" ]; do nbdcopy "$T/data" "$uri" || exit 1; done ) &
writer=$!
sleep 0.5
out=$("$NBDRAID" grow "$conf" --raid-devices 4) || die "grow to 4 refused: $out"
echo "$out"
"$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
touch "$T/stop"
wait "$writer" || die "the writer failed during the grow"
wait_status 60 "j['job']['kind'] == 'idle' and all(d['state'] == 'active' for d in j['devices'])"
[ "$(grep -c '^member = ' "$conf")" = 4 ] && ! grep -q '^spare' "$conf" ||
  die "the config does not list four members: $(cat "$conf")"
grep -q "recovery of member 2 ($dir/s0.img) starts at 0" "$T/nbdkit.log" &&
  grep -q "recovery of member 3 ($dir/s1.img) starts at 0" "$T/nbdkit.log" ||
  die "the new mirrors were not recovered: $(grep -i recovery "$T/nbdkit.log")"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the grow: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data differs after the grow to 4"
stop_server
members="$dir/d0.img $dir/d1.img $dir/s0.img $dir/s1.img"
check_members_hold "$T/data"
echo "ok: 2 -> 4 mirrors under a writer"

# 4 -> 2: refused while four mirrors are in use; done once two went.
start_server "$conf"
[ "$(export_size)" = "$size" ] || die "the 4-mirror array did not assemble"
out=$("$NBDRAID" grow "$conf" --raid-devices 2 2>&1) &&
  die "dropping in-use mirrors was accepted: $out"
[ "$out" = "nbdraid: array test has 4 members in use, more than 2: fail and remove the mirrors to drop first, as md requires" ] ||
  die "wrong refusal: $out"
for m in 1 2; do
  "$NBDRAID" fail "$conf" "$m" > /dev/null && "$NBDRAID" remove "$conf" "$m" > /dev/null ||
    die "fail/remove $m refused"
done
rm -f "$T/stop"
( while [ ! -e "$T/stop" ]; do nbdcopy "$T/data" "$uri" || exit 1; done ) &
writer=$!
sleep 0.5
out=$("$NBDRAID" grow "$conf" --raid-devices 2) || die "grow to 2 refused: $out"
echo "$out"
touch "$T/stop"
wait "$writer" || die "the writer failed during the shrink"
status_is "len([d for d in j['devices'] if d['role'] >= 0 and d['state'] == 'active']) == 2" ||
  die "the array does not have two active mirrors: $(status_json)"
[ "$(grep -c '^member = ' "$conf")" = 2 ] ||
  die "the config does not list two members: $(cat "$conf")"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the shrink: $(status_json)"
stop_server
start_server "$conf"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data differs after the shrink to 2"
stop_server
members="$dir/d0.img $dir/s1.img"
check_members_hold "$T/data"
echo "ok: 4 -> 2 mirrors once two were failed and removed"
