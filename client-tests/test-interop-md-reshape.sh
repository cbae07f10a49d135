#!/usr/bin/env bash
# nbdraid takes up a reshape Linux md left half-way: a 4-member RAID5
# nbdraid created and filled, grown in a guest with mdadm --add and
# mdadm --grow --raid-devices=5 without a backup file (md moves each
# member's data offset back; mdadm --grow works on an array nbdraid
# made: its ctime is whole seconds, as md wants it), stopped at about a
# fifth.  nbdraid serves the five members mid-reshape at the old size
# with every byte, resumes the reshape where md's superblocks say, and
# ends it: the array is a third bigger, holds the data (the new space
# zeros), a check is clean, the members match md's layout for 5
# members, and md assembles the result and finds no mismatch either.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires_guest

interop_config "$T/r5" 5 left-symmetric 64K 4 24M none
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  { cat "$T/create.log" >&2; die "nbdraid create failed"; }
truncate -s 24M "$T/r5/d4.img"
start_server "$conf"
size=$(export_size)
seeded_data "$T/data" "$size" md-reshape
nbdcopy --flush "$T/data" "$uri"
stop_server
sum=$(md5 "$T/data")

mapfile -t disks < <(disk_args r5 "$T/r5" 5)
guest_script "$T/guest.sh" <<'EOF2'
if ! out=$(mdadm --assemble /dev/md0 $(members r5 4) 2>&1); then
  fail "mdadm --assemble: $out"
else
  echo 300 > /proc/sys/dev/raid/speed_limit_min
  echo 300 > /proc/sys/dev/raid/speed_limit_max
  mdadm --add /dev/md0 /dev/disk/r5-4 > /dev/null 2>&1 || fail "mdadm --add"
  if ! out=$(mdadm --grow /dev/md0 --raid-devices=5 2>&1 < /dev/null); then
    fail "mdadm --grow: $out"
  else
    i=0
    until [ "$(sed -n 's/.*reshape = *\([0-9]*\)\..*/\1/p' /proc/mdstat)" -ge 20 ] 2>/dev/null ||
          [ $i -gt 1500 ]; do
      i=$((i + 1))
      sleep 0.2
    done
    grep -A3 '^md0' /proc/mdstat
    mdadm --stop /dev/md0 > /dev/null 2>&1 || fail "mdadm --stop"
    mdadm --examine /dev/disk/r5-0 | grep -E 'Feature|Raid Devices|Offset|Reshape|Delta'
    mdadm --examine /dev/disk/r5-0 | grep -q 'Reshape pos' && echo "left reshaping"
  fi
fi
EOF2
guest_run md-grow "${disks[@]}" "$T/guest.sh"
grep -q '^left reshaping$' "$T/md-grow.out" || die "md did not leave a reshape in progress"

printf 'member = %s\n' "$T/r5/d4.img" >> "$conf"
printf 'speed-max = 2M\n' > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"
start_server "$conf"
grep -q "reshape from 4 to 5 members resumes at new stripe [1-9]" "$T/nbdkit.log" ||
  die "nbdraid did not take up md's reshape: $(grep -i reshape "$T/nbdkit.log")"
[ "$(export_size)" = "$size" ] || die "mid-reshape the array is $(export_size) bytes, not $size"
nbdcopy "$uri" "$T/out"
[ "$(md5 "$T/out")" = "$sum" ] || die "the data differs mid-reshape"
"$NBDRAID" speed-limit "$conf" 0 0 > /dev/null
"$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
wait_status 60 "j['job']['kind'] == 'idle'"
new=$(export_size)
[ "$new" = $((size / 3 * 4)) ] || die "the array is $new bytes, not $((size / 3 * 4))"
nbdcopy "$uri" "$T/out2"
cmp -n "$size" "$T/out" "$T/out2" || die "the data differs after the reshape"
cmp -n "$((new - size))" -i "$size:0" "$T/out2" /dev/zero || die "the new space is not zeros"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the reshape: $(status_json)"
stop_server
members=$(member_paths "$T/r5" 5)
check_members_hold "$T/out2"
sum2=$(md5 "$T/out2")

guest_script "$T/guest2.sh" <<EOF2
if ! out=\$(mdadm --assemble /dev/md0 \$(members r5 5) 2>&1); then
  fail "mdadm --assemble: \$out"
else
  md_holds r5 /dev/md0 $new $sum2
  md_check r5 md0
  mdadm --stop /dev/md0 > /dev/null 2>&1 || fail "mdadm --stop"
fi
EOF2
guest_run md-after "${disks[@]}" "$T/guest2.sh"
grep -q '^FAIL' "$T/md-after.out" && die "md disagrees after the reshape"
echo "ok: nbdraid finished the reshape md left half-way"
