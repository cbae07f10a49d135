#!/usr/bin/env bash
# nbdraid grow --level between RAID0 and RAID10 on a running array
# under a writer, md's takeovers: a 2-member RAID0 with two spares
# becomes a near-2 RAID10 of 4 (raid10_takeover_raid0: the RAID0's
# members roles 0 and 2, the spares built as their mirrors, roles 1
# and 3), back to RAID0 (raid0_takeover_raid10: the mirrors spares
# again), RAID10 again, and back with one mirror failed and removed
# (its pair's other device keeps the data, the missing line goes).
# After each change the superblocks (mdadm --examine), the status and
# the config say the new level and members; every byte reads back, a
# check finds no mismatch (RAID10), the array assembles again from the
# rewritten config and the members match md's layout (md-model.py).
. "$(dirname "$0")/lib.sh"
. "$abs_top_srcdir/client-tests/lib/level-change.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

new_array r0 0 - 64K 2 34M
dir=$T/r0
truncate -s 34M "$dir/s0.img" "$dir/s1.img"
start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"
"$NBDRAID" add "$conf" "$dir/s0.img" > /dev/null || die "add s0 refused"
out=$("$NBDRAID" grow "$conf" --level 10 2>&1) &&
  die "grow --level 10 with one spare was not refused: $out"
[ "$out" = "nbdraid: array test needs 2 spares for the mirrors, array has 1 (add them with nbdraid add first)" ] ||
  die "grow --level 10 with one spare: $out"
"$NBDRAID" add "$conf" "$dir/s1.img" > /dev/null || die "add s1 refused"

# role PATH: the role mdadm --examine gives PATH
role () {
  mdadm --examine "$1" 2>/dev/null | sed -n 's/ *Device Role : //p'
}

members="$dir/d0.img $dir/s0.img $dir/d1.img $dir/s1.img"
level_change 10
grep -q "recovery of member 1 ($dir/s0.img) starts at 0" "$T/nbdkit.log" &&
  grep -q "recovery of member 3 ($dir/s1.img) starts at 0" "$T/nbdkit.log" ||
  die "the mirrors were not recovered: $(grep -i recovery "$T/nbdkit.log")"
status_is "j['members'] == 4 and j['layout'] == 'n2'" || die "status: $(status_json)"
grep -qx "level = 10" "$conf" && grep -qx "layout = n2" "$conf" &&
  [ "$(grep -c '^member = ' "$conf")" = 4 ] && ! grep -q '^spare' "$conf" ||
  die "the config does not say a 4-member RAID10: $(cat "$conf")"
if command -v mdadm > /dev/null; then
  [ "$(role "$dir/d1.img")" = "Active device 2" ] && [ "$(role "$dir/s1.img")" = "Active device 3" ] ||
    die "mdadm --examine: d1 is $(role "$dir/d1.img"), s1 $(role "$dir/s1.img")"
fi
echo "ok: RAID0 -> RAID10 under a writer, only the mirrors built"

members="$dir/d0.img $dir/d1.img"
level_change 0
grep -qx "level = 0" "$conf" && [ "$(grep -c '^member = ' "$conf")" = 2 ] &&
  grep -qx "spare = $dir/s0.img" "$conf" && grep -qx "spare = $dir/s1.img" "$conf" ||
  die "the config does not say a 2-member RAID0 and two spares: $(cat "$conf")"
if command -v mdadm > /dev/null; then
  [ "$(role "$dir/d1.img")" = "Active device 1" ] && [ "$(role "$dir/s1.img")" = spare ] ||
    die "mdadm --examine: d1 is $(role "$dir/d1.img"), s1 $(role "$dir/s1.img")"
fi
echo "ok: RAID10 -> RAID0 under a writer, the mirrors spares"

members="$dir/d0.img $dir/s0.img $dir/d1.img $dir/s1.img"
level_change 10
# d0's mirror, role 1: a spare, whichever the restart listed first.
mirror=$(awk '$1 == 1 {print $3}' <<< "$("$NBDRAID" status "$conf")")
[ "$mirror" = "$dir/s0.img" ] || [ "$mirror" = "$dir/s1.img" ] ||
  die "role 1 is not a spare: $("$NBDRAID" status "$conf")"
"$NBDRAID" fail "$conf" 0 --force > /dev/null || die "fail 0 refused"
"$NBDRAID" remove "$conf" "$dir/d0.img" > /dev/null || die "remove d0 refused"
members="$mirror $dir/d1.img"
level_change 0
grep -qx "level = 0" "$conf" && [ "$(grep -c '^member = ' "$conf")" = 2 ] &&
  grep -qx "member = $mirror" "$conf" && ! grep -q "^member = missing" "$conf" ||
  die "the config does not say a RAID0 of $mirror and d1: $(cat "$conf")"
stop_server
echo "ok: RAID10 with a mirror removed -> RAID0, its pair keeping the data"
