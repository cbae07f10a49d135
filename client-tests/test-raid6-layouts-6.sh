#!/usr/bin/env bash
# RAID6's "-6" layouts (md's ALGORITHM_*_6, what a RAID5 taken to RAID6
# has: the RAID5 layout on the first n-1 disks, Q always on the last):
# nbdraid creates and serves each of the four, the members match md's
# placement and syndromes (md-model.py), and with two members failed
# (the Q disk and a data disk, or two others) data written before and
# after the failures reads back.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

for layout in left-asymmetric-6 right-asymmetric-6 left-symmetric-6 right-symmetric-6; do
  roundtrip "$layout" 6 "$layout" 64K 5 8M
  for pair in "4 0" "1 2"; do
    rm -rf "$T/$layout"
    new_array "$layout" 6 "$layout" 64K 5 8M --assume-clean
    start_server "$conf"
    size=$(export_size)
    random_file "$T/data" "$size"
    nbdcopy --flush "$T/data" "$uri"
    for m in $pair; do
      "$NBDRAID" fail "$conf" "$m" --force > /dev/null || die "$layout: fail $m refused"
    done
    head -c 1M /dev/urandom > "$T/piece"
    dd if="$T/piece" of="$T/data" bs=1M seek=3 conv=notrunc status=none
    nbdcopy --flush "$T/data" "$uri"
    nbdcopy "$uri" "$T/out"
    cmp "$T/data" "$T/out" || die "$layout: data differs with members $pair failed"
    stop_server
    echo "ok: $layout serves with members $pair failed"
  done
done
