#!/usr/bin/env bash
# A rebuild over sparse member files: where everything a piece of the
# spare is rebuilt from is a hole, the spare is zeroed there instead of
# read and computed.  The spare, full of 0xff bytes before, must end up
# holding exactly what md's layout says (the model), the volume must
# read back through NBD as written, and the spare must be as sparse as
# the members: the never-written regions deallocated.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh
requires nbdcopy

sparse_case () {
  local name=$1 level=$2 layout=$3 chunk=$4 n=$5 victim=$6 size kib
  new_array "$name" "$level" "$layout" "$chunk" "$n" 32M --assume-clean
  start_server "$conf"
  size=$(export_size)
  # 1 MiB of random data at 0 and another off a page in the middle.
  truncate -s "$size" "$T/$name.data"
  for at in 0 $((size / 2 + 12345)); do
    write_piece "$T/$name.data" "$at"
  done
  head -c 32M /dev/zero | tr '\0' '\377' > "$T/$name/s0.img"
  "$NBDRAID" fail "$conf" "$victim" > /dev/null || die "$name: fail refused"
  "$NBDRAID" add "$conf" "$T/$name/s0.img" > /dev/null ||
    die "$name: add refused"
  wait_status 60 "j['working'] == $n and j['job']['kind'] == 'idle'"
  nbdcopy "$uri" "$T/$name.out"
  stop_server
  cmp "$T/$name.data" "$T/$name.out" || die "$name: the volume differs"
  members=$(member_paths "$T/$name" "$n" "$victim" "$T/$name/s0.img")
  check_members_hold "$T/$name.out"
  kib=$(du -k "$T/$name/s0.img" | cut -f1)
  [ "$kib" -lt 8192 ] ||
    die "$name: the spare keeps $kib KiB allocated of 32768; the members: $(du -k "$T/$name"/d*.img | tr '\n' ' ')"
  echo "ok: $name: member $victim rebuilt onto a spare of 0xff bytes; $kib KiB of it allocated"
}

sparse_case r1 1 - - 2 1
sparse_case r5 5 left-symmetric 64K 4 2
sparse_case r6 6 right-asymmetric 32K 5 4
sparse_case r10 10 f2 64K 4 1
