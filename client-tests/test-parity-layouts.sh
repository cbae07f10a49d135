#!/usr/bin/env bash
# md's parity layouts beyond the four rotating ones: RAID4 (parity on
# the last disk), RAID5 parity-first and parity-last, RAID6
# parity-first, parity-last (what a RAID0 taken over to RAID4/5 has,
# and what mdadm --layout=parity-last makes), and RAID6's "-6" layouts
# (md's ALGORITHM_*_6, what a RAID5 taken to RAID6 has: the RAID5
# layout on the first n-1 disks, Q always on the last).  nbdraid
# creates and serves each, the members match md's placement and parity
# (md-model.py), and with members failed as many as the level
# tolerates (the parity disks, or data disks) data written before and
# after the failures reads back.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

# NAME LEVEL LAYOUT MEMBERS FAILS...: each FAILS a space-separated set
cases=(
  "raid4 4 - 4|3|0"
  "r5-first 5 parity-first 4|0|2"
  "r5-last 5 parity-last 3|2|0"
  "r6-first 6 parity-first 5|0 1|2 4"
  "r6-last 6 parity-last 5|3 4|0 3"
  "r6-first-6 6 parity-first-6 5|0 4|1 2"
  "r6-la-6 6 left-asymmetric-6 5|4 0|1 2"
  "r6-ra-6 6 right-asymmetric-6 5|4 0|1 2"
  "r6-ls-6 6 left-symmetric-6 5|4 0|1 2"
  "r6-rs-6 6 right-symmetric-6 5|4 0|1 2"
)
for c in "${cases[@]}"; do
  IFS='|' read -r head fails1 fails2 <<< "$c"
  read -r name level layout n <<< "$head"
  roundtrip "$name" "$level" "$layout" 64K "$n" 8M
  for pair in "$fails1" "$fails2"; do
    rm -rf "${T:?}/$name"
    new_array "$name" "$level" "$layout" 64K "$n" 8M --assume-clean
    start_server "$conf"
    random_file "$T/data" "$(export_size)"
    nbdcopy --flush "$T/data" "$uri"
    for m in $pair; do
      "$NBDRAID" fail "$conf" "$m" --force > /dev/null ||
        die "$name: fail $m refused"
    done
    head -c 1M /dev/urandom > "$T/piece"
    dd if="$T/piece" of="$T/data" bs=1M seek=3 conv=notrunc status=none
    nbdcopy --flush "$T/data" "$uri"
    nbdcopy "$uri" "$T/out"
    cmp "$T/data" "$T/out" || die "$name: data differs with members $pair failed"
    stop_server
    echo "ok: $name serves with members $pair failed"
  done
done
