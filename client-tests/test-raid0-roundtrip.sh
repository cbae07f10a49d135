#!/usr/bin/env bash
# RAID0 with 2 and 3 members and several chunk sizes: data written through
# NBD reads back identical and sits where md puts it; a superblock with
# size 0, as md writes RAID0's, serves the same.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

roundtrip r0-2-64k 0 - 64K 2 8M
roundtrip r0-3-4k 0 - 4K 3 4M
roundtrip r0-3-1m 0 - 1M 3 8M

# md leaves a RAID0's size field 0 (raid0.c sizes it from each member's
# data area, rounded down to the chunk): such an array serves the same
# bytes at the same size.
new_array r0-md 0 - 64K 3 8M
start_server "$conf"
size=$(export_size)
random_file "$T/md.data" "$size"
nbdcopy --flush "$T/md.data" "$uri"
stop_server
for m in $members; do
  /usr/bin/python3 "$abs_top_srcdir/client-tests/sb-edit.py" "$m" 80 Q 0
done
start_server "$conf"
[ "$(export_size)" = "$size" ] || die "md's RAID0 (size 0): $(export_size) bytes, not $size"
nbdcopy "$uri" "$T/md.out"
cmp "$T/md.data" "$T/md.out" || die "md's RAID0 (size 0) reads back different data"
stop_server
echo "ok: a RAID0 superblock with size 0, as md writes it, serves the same $size bytes"
