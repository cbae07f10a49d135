#!/usr/bin/env bash
# fio through NBD (--ioengine=nbd) with crc32c verification keeps
# writing and verifying while nbdraid grow changes the array under it:
# a RAID1 given a third mirror (recovered meanwhile), a 2-member RAID1
# taken to RAID5 and back, a RAID5 taken to RAID6 (its Q disk built
# meanwhile) and back.
# Every fio run verifies what it wrote; afterwards a check finds no
# mismatch and the members match md's layout.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires fio
fio --enghelp 2>/dev/null | grep -qw nbd || skip "fio has no nbd engine"

# fio_during NAME GROW-ARGS...: fio writes and verifies the whole array
# (three passes) while grow runs.
fio_during () {
  local name=$1 fio_pid out
  shift
  fio --name="$name" --ioengine=nbd --uri="$uri" --rw=randwrite \
    --bsrange=4k-64k --iodepth=16 --size="$(export_size)" --loops=3 \
    --verify=crc32c --verify_state_save=0 --do_verify=1 --verify_fatal=1 --randrepeat=0 \
    --output="$T/$name.fio" > /dev/null 2>&1 &
  fio_pid=$!
  sleep 0.5
  out=$("$NBDRAID" grow "$conf" "$@") || die "$name: grow $* refused: $out"
  wait "$fio_pid" || { cat "$T/$name.fio" >&2; die "$name: fio verify failed across grow $*"; }
  "$NBDRAID" wait "$conf" > /dev/null
  wait_status 60 "j['job']['kind'] == 'idle' and j['working'] == j['members']"
  "$NBDRAID" check "$conf" > /dev/null || die "$name: check refused"
  wait_status 60 "j['job']['kind'] == 'idle'"
  status_is "j['mismatches'] == 0" || die "$name: mismatches: $(status_json)"
  echo "ok: $name: fio verified across grow $* ($out)"
}

new_array r1 1 - - 2 16M --assume-clean
truncate -s 16M "$T/r1/d2.img"
start_server "$conf"
"$NBDRAID" add "$conf" "$T/r1/d2.img" > /dev/null || die "add refused"
fio_during r1-3 --raid-devices 3
nbdcopy "$uri" "$T/r1.out"
stop_server
members="$T/r1/d0.img $T/r1/d1.img $T/r1/d2.img"
check_members_hold "$T/r1.out"

new_array r15 1 - - 2 16M --assume-clean
start_server "$conf"
fio_during r1-5 --level 5
fio_during r5-1 --level 1
nbdcopy "$uri" "$T/r15.out"
stop_server
check_members_hold "$T/r15.out"

new_array r56 5 left-symmetric 64K 3 16M --assume-clean
truncate -s 16M "$T/r56/d3.img"
start_server "$conf"
"$NBDRAID" add "$conf" "$T/r56/d3.img" > /dev/null || die "add refused"
fio_during r5-6 --level 6
nbdcopy "$uri" "$T/r56.out"
members="$members $T/r56/d3.img"
stop_server
check_members_hold "$T/r56.out"
start_server "$conf"
fio_during r6-5 --level 5
nbdcopy "$uri" "$T/r56.out"
stop_server
check_members_hold "$T/r56.out"
