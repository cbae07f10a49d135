#!/usr/bin/env bash
# Linux md takes up a reshape nbdraid left half-way: a 4-member RAID5
# (RAID6 with RESHAPE_LEVEL=6: test-interop-reshape-raid6.sh) grown
# with nbdraid grow --raid-devices 5 (or RESHAPE_GROW, "--chunk 128K":
# test-interop-reshape-chunk.sh), the server stopped in the
# middle (its superblocks say the reshape bit, reshape_position,
# delta_disks 1 and each member's data offset moving back).  In a
# guest md assembles the five members, finishes the reshape, and the
# array is the bigger size, holds the data written before (the new
# space zeros) and a check finds no mismatch.  A RAID5 made a RAID6
# of five (RESHAPE_GROW="--level 6 --layout left-symmetric":
# test-interop-reshape-raid5-raid6.sh) reshapes with its new Q role
# filled by the spare, valid as far as the reshape went.  A RAID0
# (RESHAPE_LEVEL=0: test-interop-reshape-raid0.sh) grows as md grows
# one, a RAID4 without its parity: md finishes that RAID4, degraded
# (nothing to check), and mdadm --grow --level=0 makes it a RAID0 of
# five holding the data, as mdadm's own grow ends.  A near-2 RAID10
# (RESHAPE_LEVEL=10: test-interop-reshape-raid10.sh) grows to five the
# same way; md leaves its new space as it reads it.  A RAID5 giving up
# a member (RESHAPE_GROW="--raid-devices 3":
# test-interop-reshape-shrink.sh), cut with grow --array-size first,
# reshapes backwards, its data offsets moving up: md ends it at the cut
# size, the fourth device a spare.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires_guest
reshape_level "${RESHAPE_LEVEL:-5}"
grow=${RESHAPE_GROW:---raid-devices 5}
n=4 shrink=
[ "$grow" = "--raid-devices 5" ] && n=5
[ "$grow" = "--raid-devices 3" ] && shrink=1
[ "${grow%% *}" = --level ] && n=5 # a spare becomes Q

interop_config "$T/$name" "$level" "$layout" 64K 4 24M none
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  { cat "$T/create.log" >&2; die "nbdraid create failed"; }
truncate -s 24M "$T/$name/d4.img"
printf 'speed-min = 1M\nspeed-max = 1M\n' > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"
start_server "$conf"
size=$(export_size)
seeded_data "$T/data" "$size" reshape
nbdcopy --flush "$T/data" "$uri"
if [ $n = 5 ]; then
  "$NBDRAID" add "$conf" "$T/$name/d4.img" > /dev/null || die "add refused"
fi
new=$size
if [ -n "$shrink" ]; then
  # Three members hold a chunk less each: the data moves up one.
  new=$(((size / data_members - 65536) * (data_members - 1)))
  "$NBDRAID" grow "$conf" --array-size "$new" > /dev/null || die "array-size refused"
fi
# shellcheck disable=SC2086
"$NBDRAID" grow "$conf" $grow > /dev/null || die "grow $grow refused"
wait_status 60 "j['job']['kind'] == 'reshape' and j['job']['done_bytes'] >= 8 * 1048576" ||
  die "the reshape did not get far: $(status_json)"
stop_server
grep -q "reshape finished" "$T/nbdkit.log" && die "the reshape finished before the stop"
[ $n = 5 ] && [ "${grow%% *}" = --raid-devices ] && new=$((size / data_members * (data_members + 1)))
truncate -s "$new" "$T/data"
# md's RAID10 reshape leaves the new space as it reads the old layout
# there (raid5's writes zeros, as nbdraid's): only the data is compared.
held=$new
if [ "$level" = 10 ]; then held=$size; truncate -s "$size" "$T/data"; fi
sum=$(md5 "$T/data")

mapfile -t disks < <(disk_args "$name" "$T/$name" $n)
guest_script "$T/guest.sh" <<EOF2
mdadm --examine /dev/disk/$name-0 | grep -E 'Reshape|Delta|Data Offset|New Offset|Raid Devices|Chunk|Layout'
if ! out=\$(mdadm --assemble /dev/md0 \$(members $name $n) 2>&1); then
  fail "mdadm --assemble: \$out"
else
  echo "assemble: \$out"
  cat /proc/mdstat
  # No systemd here to run mdadm --grow --continue for the assembly.
  if [ "\$(cat /sys/block/md0/md/sync_action)" != reshape ]; then
    mdadm --grow --continue /dev/md0 2>&1 || :
    cat /proc/mdstat
  fi
  wait_idle md0 || fail "the reshape did not finish"
  cat /proc/mdstat
  md_holds $name /dev/md0 $new $sum $held
  if [ $level = 0 ]; then
    mdadm --grow /dev/md0 --level=0 2>&1 || fail "mdadm --grow --level=0"
    [ "\$(cat /sys/block/md0/md/level)" = raid0 ] || fail "md0 is \$(cat /sys/block/md0/md/level)"
    md_holds $name-raid0 /dev/md0 $new $sum
  else
    md_check $name md0
  fi
  mdadm --detail /dev/md0 | grep -E 'Raid Devices|Array Size|State :'
  mdadm --stop /dev/md0 > /dev/null 2>&1 || fail "mdadm --stop"
fi
EOF2
guest_run reshape "${disks[@]}" "$T/guest.sh"
grep -q '^FAIL' "$T/reshape.out" && die "md did not finish the reshape"
echo "ok: md finished the reshape nbdraid left half-way"
