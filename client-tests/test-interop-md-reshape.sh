#!/usr/bin/env bash
# nbdraid takes up a reshape Linux md left half-way: a 4-member RAID5
# (RAID6 with RESHAPE_LEVEL=6: test-interop-md-reshape-raid6.sh)
# nbdraid created and filled, grown in a guest with mdadm --add and
# mdadm --grow --raid-devices=5 without a backup file (md moves each
# member's data offset back; mdadm --grow works on an array nbdraid
# made: its ctime is whole seconds, as md wants it), stopped at about a
# fifth.  nbdraid serves the five members mid-reshape at the old size
# with every byte, resumes the reshape where md's superblocks say, and
# ends it: the array holds one more data chunk a stripe and the data
# (the new space zeros), a check is clean, the members match md's layout for 5
# members, and md assembles the result and finds no mismatch either.
# A RAID0 (RESHAPE_LEVEL=0: test-interop-md-reshape-raid0.sh) grown
# with mdadm --grow --raid-devices=5 --add is a RAID4 without its
# parity in md's superblocks while it reshapes; the config still says
# RAID0, and nbdraid ends it a RAID0 of five, as mdadm would.  With
# RESHAPE_SHRINK=1 (test-interop-md-reshape-shrink.sh) a 5-member
# RAID5 gives up one: mdadm 4.2 shrinks without a backup file only
# after --array-size, --size (a megabyte less of each member: the data
# moves up 3 chunks, mdadm's min_offset_change) and "backwards" in
# reshape_direction, and md runs it from the end down; nbdraid takes it
# up at the cut size with the fifth device a spare line, and ends it.
# A RAID6 (RESHAPE_LEVEL=6: test-interop-md-reshape-shrink-raid6.sh)
# gives up its fifth the same way; so does a near-2 RAID10
# (RESHAPE_LEVEL=10: test-interop-md-reshape-shrink-raid10.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires_guest
reshape_level "${RESHAPE_LEVEL:-5}"
shrink=${RESHAPE_SHRINK:-0}
from=4 to=5
if [ "$shrink" = 1 ]; then from=5 to=4 data_members=$((data_members + 1)); fi

interop_config "$T/$name" "$level" "$layout" 64K $from 24M none
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  { cat "$T/create.log" >&2; die "nbdraid create failed"; }
truncate -s 24M "$T/$name/d4.img"
start_server "$conf"
size=$(export_size)
# A shrink's members each give a megabyte less (KiB, as mdadm takes
# it); a near-2 RAID10 holds half its members' worth.
comp_kb=$((size / data_members / 1024 - 1024))
new=$((size / data_members * (data_members + 1)))
[ "$shrink" = 1 ] && new=$((comp_kb * 1024 * (data_members - 1)))
if [ "$level" = 10 ] && [ "$shrink" = 1 ]; then
  comp_kb=$((size * 2 / from / 1024 - 1024))
  new=$((comp_kb * 1024 * to / 2))
fi
seeded_data "$T/data" "$size" md-reshape
nbdcopy --flush "$T/data" "$uri"
stop_server
sum=$(md5 "$T/data")

mapfile -t disks < <(disk_args "$name" "$T/$name" 5)
{ echo "name=$name level=$level from=$from shrink=$shrink comp_kb=$comp_kb new_kb=$((new / 1024))"; cat; } <<'EOF2' | guest_script "$T/guest.sh"
if ! out=$(mdadm --assemble /dev/md0 $(members $name $from) 2>&1); then
  fail "mdadm --assemble: $out"
else
  echo 300 > /proc/sys/dev/raid/speed_limit_min
  echo 300 > /proc/sys/dev/raid/speed_limit_max
  if [ $shrink = 1 ]; then
    # What mdadm 4.2 needs to shrink without a backup file.
    mdadm --grow /dev/md0 --array-size=$new_kb 2>&1 < /dev/null || fail "mdadm --grow --array-size"
    mdadm --grow /dev/md0 --size=$comp_kb 2>&1 < /dev/null || fail "mdadm --grow --size"
    echo backwards > /sys/block/md0/md/reshape_direction
    grow="--raid-devices=4"
  else
    # A RAID0 takes no spare: mdadm adds it with the grow.
    add=--add
    [ $level = 0 ] || { mdadm --add /dev/md0 /dev/disk/$name-4 > /dev/null 2>&1 || fail "mdadm --add"; add=; }
    grow="--raid-devices=5 ${add:+--add /dev/disk/$name-4}"
  fi
  if ! out=$(mdadm --grow /dev/md0 $grow 2>&1 < /dev/null); then
    fail "mdadm --grow: $out"
  else
    i=0
    until [ "$(sed -n 's/.*reshape = *\([0-9]*\)\..*/\1/p' /proc/mdstat)" -ge 20 ] 2>/dev/null ||
          [ $i -gt 1500 ]; do
      i=$((i + 1))
      sleep 0.2
    done
    grep -A3 '^md0' /proc/mdstat
    # mdadm left a child to make the RAID4 a RAID0 when the reshape
    # ends; stopped under it, it sometimes fails the new member first
    # (3 runs in 7 here), which md cannot assemble either: it goes first,
    # as a reboot would take it.
    if [ $level = 0 ]; then
      for p in /proc/[0-9]*; do
        [ "$(cat "$p/comm" 2>/dev/null)" = mdadm ] && kill "${p#/proc/}"
      done
      sleep 0.5
    fi
    mdadm --stop /dev/md0 > /dev/null 2>&1 || fail "mdadm --stop"
    mdadm --examine /dev/disk/$name-0 | grep -E 'Feature|Raid Devices|Offset|Reshape|Delta'
    mdadm --examine /dev/disk/$name-0 | grep -q 'Reshape pos' && echo "left reshaping"
  fi
fi
EOF2
guest_run md-grow "${disks[@]}" "$T/guest.sh"
grep -q '^left reshaping$' "$T/md-grow.out" || die "md did not leave a reshape in progress"

# The config as nbdraid grow leaves it: the new member, or the device a
# shrink drops as a spare (the array its cut size while it runs).
mid=$size
if [ "$shrink" = 1 ]; then
  sed -i "s|^member = \(.*/d4.img\)\$|spare = \1|" "$conf"
  truncate -s "$new" "$T/data"
  sum=$(md5 "$T/data")
  mid=$new
else
  printf 'member = %s\n' "$T/$name/d4.img" >> "$conf"
fi
printf 'speed-max = 2M\n' > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"
start_server "$conf"
grep -q "reshape \(of a RAID0 \)\?from $from to $to members.* resumes at new stripe [1-9]" "$T/nbdkit.log" ||
  die "nbdraid did not take up md's reshape: $(grep -i reshape "$T/nbdkit.log")"
[ "$(export_size)" = "$mid" ] || die "mid-reshape the array is $(export_size) bytes, not $mid"
nbdcopy "$uri" "$T/out"
[ "$(md5 "$T/out")" = "$sum" ] || die "the data differs mid-reshape"
"$NBDRAID" speed-limit "$conf" 0 0 > /dev/null
"$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
wait_status 60 "j['job']['kind'] == 'idle'"
[ "$(export_size)" = "$new" ] || die "the array is $(export_size) bytes, not $new"
nbdcopy "$uri" "$T/out2"
cmp -n "$mid" "$T/out" "$T/out2" || die "the data differs after the reshape"
cmp -n "$((new - mid))" -i "$mid:0" "$T/out2" /dev/zero || die "the new space is not zeros"
if [ "$shrink" = 1 ]; then
  status_is "[d['state'] for d in j['devices'] if d['role'] == -1] == ['spare']" ||
    die "the dropped device is not a spare: $(status_json)"
fi
if [ "$level" = 0 ]; then
  status_is "j['level'] == 0 and j['members'] == 5" || die "not a RAID0 of 5: $(status_json)"
else
  "$NBDRAID" check "$conf" > /dev/null || die "check refused"
  wait_status 60 "j['job']['kind'] == 'idle'"
  status_is "j['mismatches'] == 0" || die "mismatches after the reshape: $(status_json)"
fi
stop_server
members=$(member_paths "$T/$name" $to)
check_members_hold "$T/out2"
sum2=$(md5 "$T/out2")

guest_script "$T/guest2.sh" <<EOF2
if ! out=\$(mdadm --assemble /dev/md0 \$(members $name 5) 2>&1); then
  fail "mdadm --assemble: \$out"
else
  md_holds $name /dev/md0 $new $sum2
  [ $level = 0 ] || md_check $name md0
  mdadm --stop /dev/md0 > /dev/null 2>&1 || fail "mdadm --stop"
fi
EOF2
guest_run md-after "${disks[@]}" "$T/guest2.sh"
grep -q '^FAIL' "$T/md-after.out" && die "md disagrees after the reshape"
echo "ok: nbdraid finished the reshape md left half-way"
