#!/usr/bin/env bash
# nbdraid grow --raid-devices, --chunk and --layout on a RAID5 refuse
# with one line and a non-zero exit, changing nothing (every
# superblock's raid_disks, feature map and events, the config): too few
# spares, fewer members while the array is bigger than they hold (and
# array sizes that are none, or past its end), the count, chunk or
# layout it has, a chunk that is not one or does not divide the
# members, a layout that is not one, a degraded array, another job
# running, a reshape already running, a read-only array, members with
# no room before their data to move it back, an array with a partial
# parity log; a RAID10 without the spare or cut first; and levels
# other than RAID0, RAID1, RAID5, RAID6 and RAID10 (a RAID0 takes no
# fewer members).
. "$(dirname "$0")/lib.sh"
. "$abs_top_srcdir/client-tests/lib/grow-refusals.sh"
requires nbdkit

# What must not change.
fields="raid_disks feature_map events"
signature () {
  # shellcheck disable=SC2086
  superblock_fields $fields
  cat "$conf"
}

new_array r5 5 left-symmetric 64K 4 34M --assume-clean
dir=$T/r5
echo "speed-max = 1M" > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"
start_server "$conf"
expect_refusal "no spare" \
  "nbdraid: array test needs 1 spare, array has 0 (add them with nbdraid add first)" \
  grow "$conf" --raid-devices 5
truncate -s 34M "$dir/s0.img"
"$NBDRAID" add "$conf" "$dir/s0.img" > /dev/null || die "add refused"
expect_refusal "one spare for two more" \
  "nbdraid: array test needs 2 spares, array has 1 (add them with nbdraid add first)" \
  grow "$conf" --raid-devices 6
size=$(export_size)
# Three members give a chunk less each: the data moves up one.
held=$(((size / 3 - 65536) * 2))
expect_refusal "fewer members, the array not cut" \
  "nbdraid: array test is $size bytes, more than 3 members hold ($held): move any data off its end, then nbdraid grow --array-size $held first, as with mdadm" \
  grow "$conf" --raid-devices 3
expect_refusal "an array size that is none" \
  "nbdraid: '1000' is not an array size (give max, or bytes, a multiple of 1K, with an optional K, M, G or T)" \
  grow "$conf" --array-size 1000
expect_refusal "an array size past the end" \
  "nbdraid: size 1T is more than array test holds ($size bytes)" \
  grow "$conf" --array-size 1T
expect_refusal "the count it has" "nbdraid: array test already has 4 members" \
  grow "$conf" --raid-devices 4
expect_refusal "not a chunk" \
  "nbdraid: '100K' is not a chunk for array test (a power of two from 4K to 1G)" \
  grow "$conf" --chunk 100K
expect_refusal "the chunk it has" "nbdraid: array test already has a 64K chunk" \
  grow "$conf" --chunk 64K
expect_refusal "a chunk that does not divide the members" \
  "nbdraid: array test: the $(($(export_size) / 3)) bytes each member holds are not a multiple of a 1048576K chunk" \
  grow "$conf" --chunk 1G
expect_refusal "not a layout" \
  "nbdraid: 'sideways' is not a RAID5 layout (left-asymmetric, right-asymmetric, left-symmetric, right-symmetric, parity-first, parity-last)" \
  grow "$conf" --layout sideways
expect_refusal "the layout it has" "nbdraid: array test already has layout left-symmetric" \
  grow "$conf" --layout left-symmetric

"$NBDRAID" readonly "$conf" > /dev/null
expect_refusal "read-only" "nbdraid: array test is read-only" grow "$conf" --raid-devices 5
"$NBDRAID" readwrite "$conf" > /dev/null

"$NBDRAID" check "$conf" > /dev/null
wait_status 10 "j['job']['kind'] == 'check'"
expect_refusal "a job running" "nbdraid: array test is busy with a check; grow it later" \
  grow "$conf" --raid-devices 5
"$NBDRAID" idle "$conf" > /dev/null
stop_server

# Degraded: no spare, so it stays so.
new_array r5d 5 left-symmetric 64K 4 34M --assume-clean
start_server "$conf"
"$NBDRAID" fail "$conf" 2 > /dev/null
expect_refusal "degraded" \
  "nbdraid: array test is degraded (member 2 is not active): a reshape needs every member active" \
  grow "$conf" --raid-devices 5
expect_refusal "degraded, --chunk" \
  "nbdraid: array test is degraded (member 2 is not active): a reshape needs every member active" \
  grow "$conf" --chunk 128K
stop_server

# A reshape running (held at 1M/s): a second one is refused.
new_array r5b 5 left-symmetric 64K 4 34M --assume-clean
sed -i "/^\[array\]/r $T/speed" "$conf"
truncate -s 34M "$T/r5b/s0.img" "$T/r5b/s1.img"
start_server "$conf"
"$NBDRAID" add "$conf" "$T/r5b/s0.img" > /dev/null || die "add refused"
"$NBDRAID" add "$conf" "$T/r5b/s1.img" > /dev/null || die "add refused"
"$NBDRAID" grow "$conf" --raid-devices 5 > /dev/null || die "grow refused"
members="$members $T/r5b/s0.img"
# The reshape's checkpoints move the events: the shape must not change.
fields="raid_disks feature_map"
expect_refusal "a reshape running" "nbdraid: array test is busy with a reshape; grow it later" \
  grow "$conf" --raid-devices 6
expect_refusal "a chunk change while a reshape runs" \
  "nbdraid: array test is busy with a reshape; grow it later" \
  grow "$conf" --chunk 128K
out=$("$NBDRAID" idle "$conf" 2>&1) && die "idle stopped a reshape: $out"
echo "ok: idle refused: $out"
stop_server
fields="raid_disks feature_map events"

# No room before the data: data_offset 64 sectors, the bitmap before it.
new_array r5c 5 left-symmetric 64K 4 34M --assume-clean
for m in $members; do
  /usr/bin/python3 "$abs_top_srcdir/client-tests/sb-edit.py" "$m" 128 Q 64 ||
    die "sb-edit $m failed"
done
truncate -s 34M "$T/r5c/s0.img"
start_server "$conf"
"$NBDRAID" add "$conf" "$T/r5c/s0.img" > /dev/null || die "add refused"
expect_refusal "no room" \
  "nbdraid: member $T/r5c/d0.img has no room for a chunk (65536 bytes) before its data (data offset 32768): the reshape moves the data back, as md does without a backup file" \
  grow "$conf" --raid-devices 5
expect_refusal "no room for the larger chunk" \
  "nbdraid: member $T/r5c/d0.img has no room for a chunk (131072 bytes) before its data (data offset 32768): the reshape moves the data back, as md does without a backup file" \
  grow "$conf" --chunk 128K
stop_server

new_array r0 0 - 64K 2 34M
truncate -s 34M "$T/r0/s0.img"
start_server "$conf"
"$NBDRAID" add "$conf" "$T/r0/s0.img" > /dev/null || die "add refused"
expect_refusal "RAID0, fewer" \
  "nbdraid: '1' is not a member count for array test (give 2 to 128)" \
  grow "$conf" --raid-devices 1
expect_refusal "RAID0, too few spares" \
  "nbdraid: array test needs 2 spares, array has 1 (add them with nbdraid add first)" \
  grow "$conf" --raid-devices 4
expect_refusal "RAID0, --chunk" \
  "nbdraid: array test is RAID0: grow --chunk applies to a RAID5 or RAID6 only" \
  grow "$conf" --chunk 128K
stop_server
new_array r03 0 - 64K 3 34M
start_server "$conf"
expect_refusal "RAID0, fewer members" \
  "nbdraid: array test is RAID0: md takes members from a RAID5, RAID6 or RAID10 only" \
  grow "$conf" --raid-devices 2
stop_server
new_array r10 10 n2 64K 4 34M --assume-clean
start_server "$conf"
expect_refusal "RAID10, no spare" \
  "nbdraid: array test needs 1 spare, array has 0 (add them with nbdraid add first)" \
  grow "$conf" --raid-devices 5
size=$(export_size)
expect_refusal "RAID10, fewer members, the array not cut" \
  "nbdraid: array test is $size bytes, more than 3 members hold ($(((size / 2 - 65536) * 3 / 2 / 65536 * 65536))): move any data off its end, then nbdraid grow --array-size $(((size / 2 - 65536) * 3 / 2 / 65536 * 65536)) first, as with mdadm" \
  grow "$conf" --raid-devices 3
stop_server

# A partial parity log: md reshapes no array with one.
new_array r5p 5 left-symmetric 64K 4 34M --assume-clean
sed -i '/^\[array\]/a consistency-policy = ppl' "$conf"
"$NBDRAID" create --force --assume-clean "$conf" 2>> "$T/create.log"
truncate -s 34M "$T/r5p/s0.img"
start_server "$conf"
"$NBDRAID" add "$conf" "$T/r5p/s0.img" > /dev/null || die "add refused"
expect_refusal "a partial parity log" \
  "nbdraid: array test keeps a partial parity log: md reshapes no array with one" \
  grow "$conf" --raid-devices 5
stop_server
