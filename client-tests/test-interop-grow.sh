#!/usr/bin/env bash
# Linux md reads arrays nbdraid grew: RAID1, RAID5, RAID6 and RAID10
# with a bitmap, created on 8M members, the members made 16M (old bytes
# left in the new space of one), nbdraid grow --size max, the resync
# waited for and the whole new size filled through NBD; plus a RAID5
# whose data starts 12K in (4K of bitmap room), grown from 34M to 200M
# members so its bitmap chunk doubles from 4K to 8K.  In a guest md
# assembles each at the new size, holds the data, finds no mismatch in
# a check, and mdadm -X reads the resized bitmap.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires_guest

# name level layout chunk members old-size new-size bitmap-chunk after
specs="r1 1 - - 2 8M 16M 1M 1 MB
r5 5 left-symmetric 64K 3 8M 16M 1M 1 MB
r6 6 left-symmetric 64K 4 8M 16M 1M 1 MB
r10 10 n2 64K 4 8M 16M 1M 1 MB
r5s 5 left-symmetric 64K 3 34M 200M 4K 8 KB"

disks=() table=""
while read -r a level layout chunk n old new bitmap after; do
  interop_array "$T/$a" "$level" "$layout" "$chunk" "$n" "$old" "$bitmap"
  members=$(member_paths "$T/$a" "$n")
  if [ "$a" = r5s ]; then     # all zeros still: the data may move
    for m in $members; do
      /usr/bin/python3 "$abs_top_srcdir/client-tests/sb-edit.py" "$m" 128 Q 24
      /usr/bin/python3 "$abs_top_srcdir/client-tests/sb-edit.py" "$m" 136 Q \
        $(( (34 * 1024 * 1024 - 12 * 1024) / 512 ))
    done
  fi
  start_server "$conf"
  seeded_data "$T/data" "$(export_size)" "$a-old"
  nbdcopy --flush "$T/data" "$uri"
  for m in $members; do truncate -s "$new" "$m"; done
  head -c 1M /dev/urandom |
    dd of="$T/$a/d0.img" bs=1M seek=$(( ${old%M} + 2 )) conv=notrunc status=none
  "$NBDRAID" grow "$conf" --size max > /dev/null || die "$a: grow refused"
  fill_served "$a"
  stop_server
  table+="$a $level $n $size $sum $after"$'\n'
  add_disks "$a" "$T/$a" "$n"
done <<< "$specs"
echo "grew and filled $(echo -n "$table" | wc -l) arrays"

guest_script "$T/guest.sh" <<EOF2
k=0
while read -r a level n size sum after; do
  [ -n "\$a" ] || continue
  md=md\$k
  k=\$((k + 1))
  examine_bitmap "\$a" /dev/disk/\$a-0 "\$after"
  md_assemble "\$a" \$md \$(members \$a \$n) || continue
  md_verified "\$a" \$md \$size \$sum
done <<'TABLE'
$table
TABLE
EOF2
guest_run grow "${disks[@]}" "$T/guest.sh"
grep -q '^FAIL' "$T/grow.out" && die "md disagreed"
echo "ok: md assembles, checks and reads every array nbdraid grew"
