#!/usr/bin/env bash
# RAID6 in all four md layouts: data written through NBD reads back
# identical, sits where md puts it, and every stripe's P and Q are right.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

for layout in left-asymmetric right-asymmetric left-symmetric right-symmetric
do
  roundtrip "r6-6-$layout" 6 "$layout" 64K 6 6M
done
roundtrip r6-4 6 left-symmetric 32K 4 4M
roundtrip r6-9-4k 6 left-asymmetric 4K 9 3M
