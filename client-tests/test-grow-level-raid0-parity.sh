#!/usr/bin/env bash
# nbdraid grow --level between RAID0, RAID4 and RAID5 on a running
# array under a writer, md's takeovers: a 3-member RAID0 with a spare
# becomes a parity-last RAID5 of 4 (raid45_takeover_raid0), only the
# spare built, as parity; then RAID4 (raid4_takeover: the same
# placement), RAID0 again (raid0_takeover_raid45: the parity disk a
# spare), RAID4 straight from RAID0, and a RAID4 whose parity disk
# failed and was removed back to RAID0 (the role that said missing
# goes).  After each change the superblocks (mdadm --examine), the
# status and the config say the new level, layout and members; every
# byte reads back, a check finds no mismatch, the array assembles again
# from the rewritten config and the members match md's layout
# (md-model.py).  Changes md does not make are refused by name.
. "$(dirname "$0")/lib.sh"
. "$abs_top_srcdir/client-tests/lib/level-change.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

new_array r0 0 - 64K 3 34M
dir=$T/r0
truncate -s 34M "$dir/d3.img"
start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"

refused () {
  local level=$1 want=$2 out
  out=$("$NBDRAID" grow "$conf" --level "$level" 2>&1) &&
    die "grow --level $level was not refused: $out"
  [[ "$out" == *"$want"* ]] || die "grow --level $level: wanted '$want', got '$out'"
}
refused 5 "array test needs 1 spare for the parity disk, array has 0 (add one with nbdraid add first)"
refused 6 "array test: RAID0 to RAID6 is not supported"
"$NBDRAID" add "$conf" "$dir/d3.img" > /dev/null || die "add refused"

examine_has () {
  command -v mdadm > /dev/null || return 0
  mdadm --examine "$1" > "$T/examine" 2>&1
  shift
  local want
  for want in "$@"; do
    grep -q "$want" "$T/examine" || die "mdadm --examine: no '$want' in $(cat "$T/examine")"
  done
}

members=$(member_paths "$dir" 4)
level_change 5
grep -q "recovery of member 3 ($dir/d3.img) starts at 0" "$T/nbdkit.log" ||
  die "the parity disk was not recovered: $(grep -i recovery "$T/nbdkit.log")"
status_is "j['layout'] == 'parity-last'" || die "status: $(status_json)"
grep -qx "level = 5" "$conf" && grep -qx "layout = parity-last" "$conf" &&
  [ "$(grep -c '^member = ' "$conf")" = 4 ] && ! grep -q '^spare' "$conf" ||
  die "the config does not say a 4-member parity-last RAID5: $(cat "$conf")"
examine_has "$dir/d3.img" "Raid Level : raid5" "Layout : parity-last" \
  "Raid Devices : 4" "Device Role : Active device 3"
echo "ok: RAID0 -> RAID5 parity-last under a writer, only the parity disk built"

refused 6 "array test needs 1 spare for the Q disk"

members=$(member_paths "$dir" 4)
level_change 4
status_is "j['members'] == 4" || die "status: $(status_json)"
grep -qx "level = 4" "$conf" && ! grep -q "^layout" "$conf" ||
  die "the config does not say a RAID4: $(cat "$conf")"
examine_has "$dir/d0.img" "Raid Level : raid4" "Raid Devices : 4"
echo "ok: RAID5 parity-last -> RAID4 under a writer"

members=$(member_paths "$dir" 3)
level_change 0
grep -qx "level = 0" "$conf" && [ "$(grep -c '^member = ' "$conf")" = 3 ] &&
  grep -qx "spare = $dir/d3.img" "$conf" ||
  die "the config does not say a 3-member RAID0 and a spare: $(cat "$conf")"
examine_has "$dir/d3.img" "Raid Level : raid0" "Device Role : spare"
echo "ok: RAID4 -> RAID0 under a writer, the parity disk a spare"

members=$(member_paths "$dir" 4)
level_change 4
echo "ok: RAID0 -> RAID4 under a writer"

"$NBDRAID" fail "$conf" 3 --force > /dev/null || die "fail 3 refused"
"$NBDRAID" remove "$conf" "$dir/d3.img" > /dev/null || die "remove d3 refused"
grep -q "^member = missing" "$conf" || die "no missing line: $(cat "$conf")"
members=$(member_paths "$dir" 3)
level_change 0
grep -qx "level = 0" "$conf" && [ "$(grep -c '^member = ' "$conf")" = 3 ] &&
  ! grep -q "^spare\|^member = missing" "$conf" ||
  die "the config does not say a 3-member RAID0: $(cat "$conf")"
echo "ok: RAID4 without its parity disk -> RAID0"

# A crash while the parity disk is built, writes in flight: the array
# is dirty and degraded, but only of parity (md's only_parity), so it
# starts again without start-dirty-degraded and builds the rest.
truncate -s 0 "$dir/d3.img"
truncate -s 34M "$dir/d3.img"
"$NBDRAID" add "$conf" "$dir/d3.img" > /dev/null || die "add d3 again refused"
"$NBDRAID" speed-limit "$conf" 2 2 > /dev/null || die "speed-limit refused"
( while :; do nbdcopy "$T/data" "$uri" || exit 0; done ) &
writer=$!
sleep 0.5
"$NBDRAID" grow "$conf" --level 4 > /dev/null || die "grow --level 4 refused"
wait_status 30 "j['job']['kind'] == 'recovery'"
crash_server
wait "$writer" || :
start_server "$conf"
"$NBDRAID" speed-limit "$conf" 0 0 > /dev/null
"$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
wait_status 60 "j['level'] == 4 and j['job']['kind'] == 'idle' and j['working'] == 4"
nbdcopy --flush "$T/data" "$uri"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the crash: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data differs after the crash"
stop_server
members=$(member_paths "$dir" 4)
check_members_hold "$T/data"
echo "ok: a crash while the parity disk is built: it starts, builds, data intact"
