#!/usr/bin/env bash
# nbdraid grow refuses with one line and a non-zero exit, changing
# nothing (the size served, the sizes the superblocks give): no --size,
# a size it cannot parse, nothing grew, a size more than the smallest
# member allows (naming it), a smaller size (shrinking), a job running,
# a degraded or failed array, a read-only one, RAID0, RAID10 far,
# nested arrays, and NBD members whose exports grew after the server
# connected (it grows once restarted).
. "$(dirname "$0")/lib.sh"
. "$abs_top_srcdir/client-tests/lib/grow-refusals.sh"
requires nbdkit
requires nbdinfo

new_array r5 5 left-symmetric 64K 3 34M --assume-clean
array_option "speed-max = 1M"

# What must not change: the size served and the sizes each superblock
# gives.
signature () {
  export_size
  superblock_fields size_sectors data_size_sectors array_bytes
}

start_server "$conf"
if out=$("$NBDRAID" grow "$conf" 2>&1); then die "grow without --size: accepted"; fi
grep -q "usage: nbdraid grow CONFIG|--socket PATH --size max|SIZE" <<< "$out" ||
  die "grow without --size: $out"
echo "ok: no --size: usage"
expect_refusal "unparsable size" \
  "nbdraid: 'lots' is not a size (give max, or the bytes each member gives the array, with an optional K, M, G or T)" \
  grow "$conf" --size lots
expect_refusal "nothing grew" \
  "nbdraid: array test already uses 34603008 bytes of each member, all that member 0 ($T/r5/d0.img) allows" \
  grow "$conf" --size max

truncate -s 80M "$T/r5/d0.img" "$T/r5/d2.img"
truncate -s 50M "$T/r5/d1.img"
expect_refusal "more than a member allows" \
  "nbdraid: size 60M is more than member 1 ($T/r5/d1.img) allows: 51380224 bytes after its data offset" \
  grow "$conf" --size 60M
expect_refusal "shrinking" \
  "nbdraid: shrinking is not supported (array test uses 34603008 bytes of each member; 16M gives 16777216)" \
  grow "$conf" --size 16M

"$NBDRAID" readonly "$conf" > /dev/null
expect_refusal "read-only" "nbdraid: array test is read-only" grow "$conf" --size max
"$NBDRAID" readwrite "$conf" > /dev/null

"$NBDRAID" check "$conf" > /dev/null
wait_status 10 "j['job']['kind'] == 'check'"
expect_refusal "a job running" "nbdraid: array test is busy with a check; grow it later" \
  grow "$conf" --size max
"$NBDRAID" idle "$conf" > /dev/null

"$NBDRAID" fail "$conf" 2 > /dev/null
expect_refusal "degraded" \
  "nbdraid: array test is degraded (member 2 is not active): grow needs every member active" \
  grow "$conf" --size max
"$NBDRAID" fail "$conf" 1 --force > /dev/null
expect_refusal "failed" "nbdraid: array test has failed" grow "$conf" --size max
stop_server

new_array r0 0 - 64K 2 34M
truncate -s 80M "$T/r0/d0.img" "$T/r0/d1.img"
start_server "$conf"
expect_refusal "RAID0" "nbdraid: array test is RAID0: md cannot change the size of a RAID0" \
  grow "$conf" --size max
stop_server

new_array r10f 10 f2 64K 3 34M --assume-clean
truncate -s 80M "$T/r10f/d0.img" "$T/r10f/d1.img" "$T/r10f/d2.img"
start_server "$conf"
expect_refusal "RAID10 far" "nbdraid: array test is RAID10 with a far layout: md cannot change its size" \
  grow "$conf" --size max
stop_server

# Nested arrays: RAID0 over two RAID1 groups; a group grows
# (test-grow-nested.sh), a RAID0 on top never does.
nested_arrays
start_server "$conf"
truncate -s 40M "$T"/n/g*-d*.img
"$NBDRAID" grow "$conf" --size max --array g0 > /dev/null || die "a group did not grow"
expect_refusal "nested, top" "nbdraid: array top is RAID0: md cannot change the size of a RAID0" \
  grow "$conf" --size max
stop_server

# NBD members: their size is the one the export had at connect.  After
# the exports grew, grow says so; a restarted server sees the new size.
nbd_array rn 1 - - 2 34M
start_server "$conf"
truncate -s 80M "$T/rn/d0.img" "$T/rn/d1.img"
expect_refusal "NBD exports grew unseen" \
  "nbdraid: array test already uses 34603008 bytes of each member, all that member 0 ($(sed -n 's/^member = //p' "$conf" | head -1)) allows (an NBD member's size is the one its export had when the server connected: restart the server to see an export that grew)" \
  grow "$conf" --size max
stop_server
start_server "$conf"
"$NBDRAID" grow "$conf" --size max > /dev/null || die "NBD members: grow after a restart refused"
[ "$(export_size)" = $((79 * 1024 * 1024)) ] || die "NBD members: $(export_size) bytes after the grow"
echo "ok: NBD members grow once the server reconnects"
