#!/usr/bin/env bash
# nbdraid grow --level refuses with one line and a non-zero exit,
# changing nothing (the superblocks' level and events, the config): a
# level it cannot parse, the level the array has, changes it does not
# make (RAID1 to RAID6, RAID0 to RAID6), a RAID1 of more than two
# members, a RAID5 of two to RAID6 or one without a spare, a RAID0 to
# RAID5 without one, a RAID6 whose Q rotates to RAID5, a RAID5 whose
# parity rotates to RAID0 or RAID4, a RAID4 with a bitmap to RAID0, a
# RAID10 far or of an odd count to RAID0, a
# read-only, degraded or busy array,
# write-mostly members, a RAID5 with a partial parity log, and --level
# with another change.
. "$(dirname "$0")/lib.sh"
. "$abs_top_srcdir/client-tests/lib/grow-refusals.sh"
requires nbdkit

# What must not change: level and events in every superblock, and the
# config.
signature () {
  superblock_fields level events
  cat "$conf"
}

new_array r1 1 - - 2 34M --assume-clean
array_option "speed-max = 1M"
start_server "$conf"
if out=$("$NBDRAID" grow "$conf" --level 5 --raid-devices 3 2>&1); then
  die "--level with --raid-devices: accepted"
fi
grep -q "usage: nbdraid grow CONFIG|--socket PATH --size max|SIZE | --array-size max|SIZE | --raid-devices N | --level L" <<< "$out" ||
  die "--level with --raid-devices: $out"
echo "ok: --level with another change: usage"
expect_refusal "not a level" "nbdraid: 'five' is not a level (0, 1, 4, 5, 6, 10, or raid5...)" \
  grow "$conf" --level five
expect_refusal "the same level" "nbdraid: array test is RAID1 already" grow "$conf" --level raid1
expect_refusal "RAID1 to RAID6" \
  "nbdraid: array test: RAID1 to RAID6 is not supported (grow --level takes a 2-member RAID1 to RAID5 and back, a RAID5 to RAID6 and back, a RAID0 to RAID4, RAID5 or RAID10 and back, a RAID4 to RAID5 and back)" \
  grow "$conf" --level 6

"$NBDRAID" readonly "$conf" > /dev/null
expect_refusal "read-only" "nbdraid: array test is read-only" grow "$conf" --level 5
"$NBDRAID" readwrite "$conf" > /dev/null

"$NBDRAID" check "$conf" > /dev/null
wait_status 10 "j['job']['kind'] == 'check'"
expect_refusal "a job running" "nbdraid: array test is busy with a check; change its level later" \
  grow "$conf" --level 5
"$NBDRAID" idle "$conf" > /dev/null

"$NBDRAID" fail "$conf" 1 > /dev/null
expect_refusal "degraded" \
  "nbdraid: array test is degraded (member 1 is not active): a level change needs every member active" \
  grow "$conf" --level 5
stop_server

new_array r13 1 - - 3 34M --assume-clean
start_server "$conf"
expect_refusal "three mirrors" \
  "nbdraid: array test has 3 members: md takes a RAID1 to RAID5 with 2 members only (grow --raid-devices 2 first)" \
  grow "$conf" --level 5
stop_server

new_array r0 0 - 64K 2 34M
start_server "$conf"
expect_refusal "RAID0 to RAID6" \
  "nbdraid: array test: RAID0 to RAID6 is not supported (grow --level takes a 2-member RAID1 to RAID5 and back, a RAID5 to RAID6 and back, a RAID0 to RAID4, RAID5 or RAID10 and back, a RAID4 to RAID5 and back)" \
  grow "$conf" --level 6
expect_refusal "RAID0 to RAID5 without a spare" \
  "nbdraid: array test needs 1 spare for the parity disk, array has 0 (add one with nbdraid add first)" \
  grow "$conf" --level 5
stop_server

# A rotating RAID5 is no RAID0 nor RAID4; a RAID4 with a bitmap, no
# RAID0 (md's RAID0 keeps none).
new_array rot 5 left-symmetric 64K 3 34M --assume-clean
start_server "$conf"
expect_refusal "rotating RAID5 to RAID0" \
  "nbdraid: array test has layout left-symmetric, its parity rotating: md takes only a parity-last RAID5 to RAID0 (grow --layout parity-last first)" \
  grow "$conf" --level 0
expect_refusal "rotating RAID5 to RAID4" \
  "nbdraid: array test has layout left-symmetric, its parity rotating: md takes only a parity-last RAID5 to RAID4 (grow --layout parity-last first)" \
  grow "$conf" --level 4
stop_server
new_array r4bm 4 - 64K 3 34M --assume-clean
start_server "$conf"
expect_refusal "RAID4 with a bitmap to RAID0" \
  "nbdraid: array test keeps a write-intent bitmap, which md's RAID0 cannot, and changing its consistency policy is not supported" \
  grow "$conf" --level 0
stop_server
# md takes only a near-2 RAID10 of an even count to RAID0.
new_array r10f 10 f2 64K 4 34M --assume-clean
start_server "$conf"
expect_refusal "RAID10 f2 to RAID0" \
  "nbdraid: array test is a RAID10 f2 of 4 members: md takes only a near-2 (n2) RAID10 of an even count to RAID0" \
  grow "$conf" --level 0
stop_server
new_array r10o 10 n2 64K 3 34M --assume-clean
start_server "$conf"
expect_refusal "RAID10 n2 of 3 to RAID0" \
  "nbdraid: array test is a RAID10 n2 of 3 members: md takes only a near-2 (n2) RAID10 of an even count to RAID0" \
  grow "$conf" --level 0
stop_server

# A write-behind mirror: RAID5 has no write-mostly copies.
new_array wb 1 - - 2 34M --assume-clean
sed -i "s|^member = $T/wb/d1.img|& write-mostly|" "$conf"
sed -i "/^\[array\]/a write-behind = 16" "$conf"
start_server "$conf"
expect_refusal "write-mostly" \
  "nbdraid: member 1 ($T/wb/d1.img) of array test is write-mostly: drop write-mostly from its config line and restart first" \
  grow "$conf" --level 5
stop_server

new_array r52 5 left-symmetric 64K 2 34M --assume-clean
start_server "$conf"
expect_refusal "RAID5 of two to RAID6" \
  "nbdraid: array test has 2 members: md takes a RAID5 of 3 or more to RAID6" \
  grow "$conf" --level 6
stop_server

new_array r53 5 left-symmetric 64K 3 34M --assume-clean
start_server "$conf"
expect_refusal "no spare for Q" \
  "nbdraid: array test needs 1 spare for the Q disk, array has 0 (add one with nbdraid add first)" \
  grow "$conf" --level 6
stop_server

new_array r6 6 left-symmetric 64K 4 34M --assume-clean
start_server "$conf"
expect_refusal "RAID6 with Q rotating" \
  "nbdraid: array test has layout left-symmetric, its Q rotating: md takes only a -6 layout or parity-last (Q on the last member) to RAID5 (grow --layout left-symmetric-6 first)" \
  grow "$conf" --level 5
stop_server

# A partial parity log is RAID5's alone in md.
new_array ppl 5 left-symmetric 64K 3 34M --assume-clean
sed -i '/^\[array\]/a consistency-policy = ppl' "$conf"
"$NBDRAID" create --force --assume-clean "$conf" 2>> "$T/create.log"
start_server "$conf"
expect_refusal "a partial parity log" \
  "nbdraid: array test keeps a partial parity log, which md keeps for RAID5 alone; changing the consistency policy is not supported" \
  grow "$conf" --level 6
stop_server
