#!/usr/bin/env bash
# RAID1 with 2 and 3 copies: data written through NBD reads back identical
# and every copy holds it.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

roundtrip r1-2 1 - - 2 8M
roundtrip r1-3 1 - - 3 6M
