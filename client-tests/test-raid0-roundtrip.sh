#!/usr/bin/env bash
# RAID0 with 2 and 3 members and several chunk sizes: data written through
# NBD reads back identical and sits where md puts it.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

roundtrip r0-2-64k 0 - 64K 2 8M
roundtrip r0-3-4k 0 - 4K 3 4M
roundtrip r0-3-1m 0 - 1M 3 8M
