#!/usr/bin/env bash
# mdadm --examine (Debian's mdadm, no md driver needed) reads the
# superblocks nbdraid create writes: level, layout, chunk, devices,
# role, array UUID, and a correct checksum; nbdraid examine agrees.
. "$(dirname "$0")/lib.sh"
requires mdadm

check_examine () {
  local name=$1 level=$2 layout=$3 chunk=$4 n=$5 mdlayout=$6 i out uuid
  new_array "$name" "$level" "$layout" "$chunk" "$n" 8M --assume-clean
  uuid=$("$NBDRAID" examine "$T/$name/d0.img" | sed -n 's/ *Array UUID : //p')
  [ -n "$uuid" ] || die "$name: nbdraid examine shows no UUID"
  for ((i = 0; i < n; i++)); do
    out=$(mdadm --examine "$T/$name/d$i.img") || die "$name: mdadm failed"
    grep -q "Raid Level : raid$level\$" <<< "$out" || die "$name: level: $out"
    grep -q "Raid Devices : $n\$" <<< "$out" || die "$name: devices: $out"
    grep -q "Array UUID : $uuid\$" <<< "$out" || die "$name: uuid: $out"
    grep -q "Checksum : .* - correct" <<< "$out" || die "$name: csum: $out"
    grep -q "Device Role : Active device $i\$" <<< "$out" ||
      die "$name: role: $out"
    grep -q "Name : test\$" <<< "$out" || die "$name: name: $out"
    if [ "$chunk" != - ]; then
      grep -q "Chunk Size : $chunk\$" <<< "$out" || die "$name: chunk: $out"
    fi
    if [ "$mdlayout" != - ]; then
      grep -q "Layout : $mdlayout\$" <<< "$out" || die "$name: layout: $out"
    fi
  done
  echo "ok: $name"
}

check_examine r0 0 - 64K 2 -
check_examine r1 1 - - 2 -
check_examine r5 5 right-asymmetric 128K 4 right-asymmetric
check_examine r6 6 left-symmetric 256K 6 left-symmetric
check_examine r6la 6 left-asymmetric 32K 5 left-asymmetric
check_examine r10n2 10 n2 64K 4 near=2
check_examine r10f2 10 f2 64K 4 far=2
check_examine r10o2 10 o2 64K 3 offset=2
check_examine r10n3 10 n3 64K 3 near=3
