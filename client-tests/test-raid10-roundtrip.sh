#!/usr/bin/env bash
# RAID10 near, far and offset layouts: data written through NBD reads back
# identical and every copy of every chunk sits where md puts it.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

roundtrip r10-n2-4 10 n2 64K 4 6M
roundtrip r10-n2-3 10 n2 64K 3 6M
roundtrip r10-n3-5 10 n3 32K 5 6M
roundtrip r10-f2-4 10 f2 64K 4 6M
roundtrip r10-f2-3 10 f2 64K 3 6M
roundtrip r10-o2-4 10 o2 64K 4 6M
roundtrip r10-o2-3 10 o2 4K 3 4M
