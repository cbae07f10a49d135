#!/usr/bin/env bash
# Members of unequal size: the array uses the smallest, as md does,
# create says so, and the data still round-trips.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

d=$T/u
mkdir -p "$d"
truncate -s 8M "$d/d0.img"
truncate -s 6M "$d/d1.img"
truncate -s 9M "$d/d2.img"
write_config "$d/a.conf" 5 left-symmetric 64K "$d"/d{0,1,2}.img
"$NBDRAID" create "$d/a.conf" 2> "$T/create.err" || die "create failed"
grep -q "members differ in size; using the smallest, $d/d1.img: 6291456 bytes" \
  "$T/create.err" || die "create did not report sizes: $(cat "$T/create.err")"
# 6 MiB member, mdadm's data offset of 1 MiB here: 5 MiB per member.
for i in 0 1 2; do
  size=$("$NBDRAID" examine --json "$d/d$i.img" |
         sed -n 's/.*"size_sectors": \([0-9]*\).*/\1/p')
  [ "$size" = 10240 ] || die "d$i: used size $size sectors, expected 10240"
done
members="$d/d0.img $d/d1.img $d/d2.img"
conf=$d/a.conf
start_server "$conf"
[ "$(export_size)" = $((2 * 10240 * 512)) ] || die "size $(export_size)"
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data differs"
stop_server
check_members_hold "$T/data"
echo "ok: unequal members use the smallest"
