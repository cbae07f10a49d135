#!/usr/bin/env bash
# Linux md reads arrays whose level or mirror count nbdraid changed
# without moving data: a 2-member RAID1 made RAID5 (grow --level 5), a
# 2-member RAID5 made RAID1 (grow --level 1), a 2-member RAID1 given a
# third mirror from a spare (grow --raid-devices 3, recovered), and a
# 3-member RAID5 made a 4-member RAID6 of the left-symmetric-6 layout
# (grow --level 6, the spare built as Q), a 3-member RAID0 made a
# 4-member RAID4 and a parity-last RAID5 (the spare built as parity),
# a 4-member RAID4 made a RAID0 of 3 (the parity disk a spare), and a
# 2-member RAID0 made a near-2 RAID10 of 4 (the spares built as
# mirrors).
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
r56 5 left-symmetric 64K 3 4 --level 6 raid6
r04 0 - 64K 3 4 --level 4 raid4
r05 0 - 64K 3 4 --level 5 raid5
r40 4 - 64K 4 3 --level 0 raid0
r010 0 - 64K 2 4 --level 10 raid10"

disks=() table=""
while read -r a level layout chunk n after opt value want; do
  bitmap=1M # md's RAID0 keeps none
  [ "$level" = 0 ] || [ "$want" = raid0 ] && bitmap=none
  interop_array "$T/$a" "$level" "$layout" "$chunk" "$n" 8M "$bitmap"
  start_server "$conf"
  for ((j = n; j < after; j++)); do
    truncate -s 8M "$T/$a/d$j.img"
    "$NBDRAID" add "$conf" "$T/$a/d$j.img" > /dev/null || die "$a: add refused"
  done
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
  if [ "\$want" = raid0 ]; then # nothing to check
    md_holds "\$a" /dev/\$md \$size \$sum
    md_stop "\$a" \$md
  else
    md_verified "\$a" \$md \$size \$sum
  fi
done <<'TABLE'
$table
TABLE
EOF2
guest_run takeover "${disks[@]}" "$T/guest.sh"
grep -q '^FAIL' "$T/takeover.out" && die "md disagreed"
echo "ok: md assembles, checks and reads every array nbdraid changed"
