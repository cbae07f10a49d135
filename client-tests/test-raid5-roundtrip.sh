#!/usr/bin/env bash
# RAID5 in all four md layouts: data written through NBD reads back
# identical, sits where md puts it, and every stripe's P is right.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

for layout in left-asymmetric right-asymmetric left-symmetric right-symmetric
do
  roundtrip "r5-4-$layout" 5 "$layout" 64K 4 6M
done
roundtrip r5-2 5 left-symmetric 16K 2 4M
roundtrip r5-5-4k 5 right-asymmetric 4K 5 4M
