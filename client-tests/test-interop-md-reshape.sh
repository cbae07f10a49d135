#!/usr/bin/env bash
# nbdraid takes up a reshape Linux md left half-way: in a guest, a
# 4-member RAID5 made by mdadm and filled with random data (its md5
# noted), grown with mdadm --add and mdadm --grow --raid-devices=5
# without a backup file (md moves each member's data offset back), and
# stopped at about a fifth.  nbdraid serves the five members
# mid-reshape at the old size with the same bytes, resumes the reshape
# where md's superblocks say, and ends it: the array is a third
# bigger, holds the data (the new space zeros), a check is clean, and
# md assembles the result and finds no mismatch either.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires_guest

make_members "$T/r5" 5 24M
mapfile -t disks < <(disk_args r5 "$T/r5" 5)
guest_script "$T/guest.sh" <<'EOF2'
if ! out=$(mdadm --create /dev/md0 --run --level=5 --chunk=64K \
             --raid-devices=4 $(members r5 4) 2>&1 < /dev/null); then
  fail "mdadm --create: $out"
else
  wait_idle md0
  dd if=/dev/urandom of=/dev/md0 bs=1M status=none 2>/dev/null || :
  echo "size $(blockdev --getsize64 /dev/md0) md5 $(md5sum < /dev/md0 | cut -d' ' -f1)"
  echo 300 > /proc/sys/dev/raid/speed_limit_min
  echo 300 > /proc/sys/dev/raid/speed_limit_max
  mdadm --add /dev/md0 /dev/disk/r5-4 > /dev/null 2>&1 || fail "mdadm --add"
  if ! out=$(mdadm --grow /dev/md0 --raid-devices=5 2>&1 < /dev/null); then
    fail "mdadm --grow: $out"
    dmesg | tail -3
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
read -r size sum < <(sed -n 's/^size \([0-9]*\) md5 \([0-9a-f]*\)$/\1 \2/p' "$T/md-grow.out")

write_config "$T/r5/a.conf" 5 left-symmetric 64K $(member_paths "$T/r5" 5)
conf=$T/r5/a.conf
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
