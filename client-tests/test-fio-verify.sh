#!/usr/bin/env bash
# fio through NBD (--ioengine=nbd) with crc32c verification: random
# writes of 4K-64K at queue depth 16 on RAID5, RAID6 and RAID10, read
# back and verified; afterwards redundancy is intact on the members.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires fio
fio --enghelp 2>/dev/null | grep -qw nbd || skip "fio has no nbd engine"

fio_case () {
  local name=$1
  shift
  new_array "$name" "$@"
  start_server "$conf"
  fio --name="$name" --ioengine=nbd --uri="$uri" --rw=randwrite \
    --bsrange=4k-64k --iodepth=16 --size="$(export_size)" \
    --verify=crc32c --verify_state_save=0 --do_verify=1 --verify_fatal=1 --randrepeat=0 \
    --output="$T/$name.fio" > /dev/null 2>&1 ||
    { cat "$T/$name.fio" >&2; die "$name: fio verify failed"; }
  nbdcopy "$uri" "$T/$name.out"
  stop_server
  check_members_hold "$T/$name.out"
  echo "ok: $name"
}

fio_case r5 5 left-symmetric 64K 4 12M
fio_case r6 6 left-asymmetric 32K 6 8M
fio_case r10 10 n2 64K 4 12M
