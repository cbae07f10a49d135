#!/usr/bin/env bash
# Linux md reads arrays whose level or mirror count nbdraid changed
# without moving data: a 2-member RAID1 made RAID5 (grow --level 5), a
# 2-member RAID5 made RAID1 (grow --level 1), a 2-member RAID1 given a
# third mirror from a spare (grow --raid-devices 3, recovered), and a
# 3-member RAID5 made a 4-member RAID6 of the left-symmetric-6 layout
# (grow --level 6, the spare built as Q).
# Each was filled through NBD after the change.  In a guest md
# assembles each at its new level and count, holds the data and finds
# no mismatch in a check.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires_guest

# name level layout chunk members-before members-after change...
specs="r15 1 - - 2 2 --level 5 raid5
r51 5 left-symmetric 64K 2 2 --level 1 raid1
r13 1 - - 2 3 --raid-devices 3 raid1
r56 5 left-symmetric 64K 3 4 --level 6 raid6"

disks=() table=""
while read -r a level layout chunk n after opt value want; do
  interop_array "$T/$a" "$level" "$layout" "$chunk" "$n" 8M 1M
  start_server "$conf"
  if [ "$after" -gt "$n" ]; then
    truncate -s 8M "$T/$a/d$n.img"
    "$NBDRAID" add "$conf" "$T/$a/d$n.img" > /dev/null || die "$a: add refused"
  fi
  "$NBDRAID" grow "$conf" "$opt" "$value" > /dev/null || die "$a: grow $opt $value refused"
  fill_served "$a"
  stop_server
  table+="$a $want $after $size $sum"$'\n'
  add_disks "$a" "$T/$a" "$after"
done <<< "$specs"
echo "changed and filled $(echo -n "$table" | wc -l) arrays"

guest_script "$T/guest.sh" <<EOF2
k=0
while read -r a want n size sum; do
  [ -n "\$a" ] || continue
  md=md\$k
  k=\$((k + 1))
  md_assemble "\$a" \$md \$(members \$a \$n) || continue
  level=\$(cat /sys/block/\$md/md/level)
  disks=\$(cat /sys/block/\$md/md/raid_disks)
  layout=\$(cat /sys/block/\$md/md/layout)
  if [ "\$level" = "\$want" ] && [ "\$disks" = "\$n" ]; then ok "\$a: md sees \$level of \$disks, layout \$layout"
  else fail "\$a: md sees \$level of \$disks, not \$want of \$n"; fi
  md_verified "\$a" \$md \$size \$sum
done <<'TABLE'
$table
TABLE
EOF2
guest_run takeover "${disks[@]}" "$T/guest.sh"
grep -q '^FAIL' "$T/takeover.out" && die "md disagreed"
echo "ok: md assembles, checks and reads every array nbdraid changed"
