#!/usr/bin/env bash
# Parity writes on NBD members that complete out of order: each member
# is served by jittery-member.sh, which sleeps a random 0-8 ms before
# every read and write.  On RAID5 and RAID6 (16K chunks), fio writes
# with crc32c verification at queue depth 16: sequential writes of
# whole stripes and more (the stripe batch's whole-stripe path, member
# writes joined across stripes), sequential writes of 40K that leave
# stripes partly written and cross their ends (parts gathered from
# several requests, carried by the write that completes a stripe), and
# random writes of 4K-96K.  Every block must read back, and the member
# files must hold what md's layout and parity say (md-model.py).
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires fio
fio --enghelp 2>/dev/null | grep -qw nbd || skip "fio has no nbd engine"
nbdkit sh --version >/dev/null 2>&1 || skip "nbdkit has no sh plugin"

JITTERY=$abs_top_srcdir/client-tests/jittery-member.sh

# jittery_array NAME LEVEL N SIZE: N members of SIZE in $T/NAME, each
# served by jittery-member.sh; sets conf and members.
jittery_array () {
  local name=$1 level=$2 n=$3 size=$4 i uris=()
  make_members "$T/$name" "$n" "$size"
  for ((i = 0; i < n; i++)); do
    rm -f "$T/$name-$i.sock" "$T/$name-$i.pid"
    JITTER_FILE=$T/$name/d$i.img nbdkit -f -U "$T/$name-$i.sock" \
      -P "$T/$name-$i.pid" sh "$JITTERY" 2>> "$T/members.log" &
    disown $!                   # no job notice when it is killed
    cleanup_fn "kill -9 $! 2>/dev/null"
    wait_for 10 test -s "$T/$name-$i.pid" ||
      die "member server $name-$i did not start"
    uris+=("nbd+unix:///?socket=$T/$name-$i.sock")
  done
  write_config "$T/$name/a.conf" "$level" - 16K "${uris[@]}"
  sed -i '/^\[array\]/a bitmap = none' "$T/$name/a.conf"
  "$NBDRAID" create --assume-clean "$T/$name/a.conf" 2>> "$T/create.log" ||
    { cat "$T/create.log" >&2; die "nbdraid create $name failed"; }
  conf=$T/$name/a.conf
  members=$(member_paths "$T/$name" "$n")
}

# verify NAME FIO-ARGS...: one fio job writing and verifying the export.
verify () {
  local name=$1
  shift
  fio --name="$name" --ioengine=nbd --uri="$uri" --iodepth=16 \
    --size="$(export_size)" --verify=crc32c --verify_state_save=0 \
    --do_verify=1 --verify_fatal=1 --randrepeat=0 "$@" \
    --output="$T/$name.fio" > /dev/null 2>&1 ||
    { cat "$T/$name.fio" >&2; die "$name: fio verify failed"; }
}

parity_case () {
  local name=$1 level=$2 n=$3
  jittery_array "$name" "$level" "$n" 2M
  start_server "$conf"
  verify "$name-whole" --rw=write --bs=192K
  verify "$name-parts" --rw=write --bs=40K
  verify "$name-random" --rw=randwrite --bsrange=4k-96k --number_ios=200
  nbdcopy "$uri" "$T/$name.out"
  stop_server
  check_members_hold "$T/$name.out"
  echo "ok: RAID$level, $n members completing out of order"
}

parity_case r5 5 5
parity_case r6 6 6
