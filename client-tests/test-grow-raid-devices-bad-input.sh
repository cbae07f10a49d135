#!/usr/bin/env bash
# nbdraid grow --raid-devices refuses with one line and a non-zero
# exit, changing nothing (the superblocks' raid_disks and events, the
# config): --size given too, a count it cannot parse or below RAID1's
# two, the count the array has, a level other than RAID1 (RAID10), too few
# spares, a job running, a read-only array, a degraded one, mirrors in
# use to drop, and fewer members for a nested array.
. "$(dirname "$0")/lib.sh"
. "$abs_top_srcdir/client-tests/lib/grow-refusals.sh"
requires nbdkit

new_array r1 1 - - 3 34M --assume-clean
array_option "speed-max = 1M"

# What must not change: raid_disks and events in every superblock, and
# the config.
signature () {
  superblock_fields raid_disks events
  cat "$conf"
}

start_server "$conf"
if out=$("$NBDRAID" grow "$conf" --size max --raid-devices 4 2>&1); then
  die "--size with --raid-devices: accepted"
fi
grep -q "usage: nbdraid grow CONFIG|--socket PATH --size max|SIZE | --array-size max|SIZE | --raid-devices N" <<< "$out" ||
  die "--size with --raid-devices: $out"
echo "ok: --size and --raid-devices together: usage"
expect_refusal "not a count" \
  "nbdraid: 'four' is not a member count for array test (give 2 to 128)" \
  grow "$conf" --raid-devices four
expect_refusal "below two" \
  "nbdraid: '1' is not a member count for array test (give 2 to 128)" \
  grow "$conf" --raid-devices 1
expect_refusal "the same count" "nbdraid: array test already has 3 members" \
  grow "$conf" --raid-devices 3
expect_refusal "no spare" \
  "nbdraid: array test needs 1 spare, array has 0 (add them with nbdraid add first)" \
  grow "$conf" --raid-devices 4
expect_refusal "in use" \
  "nbdraid: array test has 3 members in use, more than 2: fail and remove the mirrors to drop first, as md requires" \
  grow "$conf" --raid-devices 2

"$NBDRAID" readonly "$conf" > /dev/null
expect_refusal "read-only" "nbdraid: array test is read-only" grow "$conf" --raid-devices 2
"$NBDRAID" readwrite "$conf" > /dev/null

"$NBDRAID" check "$conf" > /dev/null
wait_status 10 "j['job']['kind'] == 'check'"
expect_refusal "a job running" "nbdraid: array test is busy with a check; grow it later" \
  grow "$conf" --raid-devices 2
"$NBDRAID" idle "$conf" > /dev/null

"$NBDRAID" fail "$conf" 2 > /dev/null
expect_refusal "degraded" \
  "nbdraid: array test is degraded (member 2 is not active): --raid-devices needs every member active or removed" \
  grow "$conf" --raid-devices 2
stop_server

new_array r10 10 f2 64K 4 34M --assume-clean
start_server "$conf"
expect_refusal "RAID10, far layout" \
  "nbdraid: array test is RAID10 with a far layout: md cannot reshape it" \
  grow "$conf" --raid-devices 5
stop_server

# Nested: RAID0 over two RAID1 groups; a group takes more members
# (test-grow-nested.sh), never fewer.
nested_arrays
start_server "$conf"
expect_refusal "nested, inside, fewer" \
  "nbdraid: array g0 is nested in array top: fewer members is not supported (the array above uses all it holds)" \
  grow "$conf" --raid-devices 1 --array g0
stop_server
