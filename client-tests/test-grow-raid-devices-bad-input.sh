#!/usr/bin/env bash
# nbdraid grow --raid-devices refuses with one line and a non-zero
# exit, changing nothing (the superblocks' raid_disks and events, the
# config): --size given too, a count it cannot parse or below RAID1's
# two, the count the array has, a level other than RAID1, too few
# spares, a job running, a read-only array, a degraded one, mirrors in
# use to drop, and a nested array.
. "$(dirname "$0")/lib.sh"
requires nbdkit

new_array r1 1 - - 3 34M --assume-clean
echo "speed-max = 1M" > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"

# What must not change: raid_disks and events in every superblock, and
# the config.
signature () {
  local m
  for m in $members; do
    "$NBDRAID" examine --json "$m" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)[0]
print(j["raid_disks"], j["events"])'
  done
  cat "$conf"
}

# expect_refusal DESCRIPTION EXPECTED-TEXT nbdraid-args...
expect_refusal () {
  local what=$1 want=$2 out before
  shift 2
  before=$(signature)
  if out=$("$NBDRAID" "$@" 2>&1); then die "$what: accepted: $out"; fi
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || die "$what: not one line: $out"
  [ "$out" = "$want" ] || die "$what: expected '$want', got: $out"
  [ "$(signature)" = "$before" ] || die "$what: the array changed"
  echo "ok: $what: $out"
}

start_server "$conf"
if out=$("$NBDRAID" grow "$conf" --size max --raid-devices 4 2>&1); then
  die "--size with --raid-devices: accepted"
fi
grep -q "usage: nbdraid grow CONFIG|--socket PATH --size max|SIZE | --raid-devices N" <<< "$out" ||
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

new_array r6 6 left-symmetric 64K 4 34M --assume-clean
start_server "$conf"
expect_refusal "RAID6" \
  "nbdraid: array test is RAID6: --raid-devices changes a RAID1's mirrors or a RAID5's members only" \
  grow "$conf" --raid-devices 5
stop_server

# Nested: RAID0 over two RAID1 groups; the groups' members are not
# changed from here.
mkdir -p "$T/n"
{
  printf '[array]\nname = top\nsocket = %s\nlevel = 0\nchunk = 64K\n' "$T/n/top.sock"
  printf '[members]\nmember = array:g0\nmember = array:g1\n'
  for g in 0 1; do
    printf '[array g%s]\nlevel = 1\n[members g%s]\n' "$g" "$g"
    for i in 0 1; do
      truncate -s 20M "$T/n/g$g-d$i.img"
      echo "member = g$g-d$i.img"
    done
  done
} > "$T/n/top.conf"
"$NBDRAID" create --assume-clean "$T/n/top.conf" 2>> "$T/create.log" ||
  die "nested create: $(tail -1 "$T/create.log")"
conf=$T/n/top.conf members=""
start_server "$conf"
expect_refusal "nested, inside" \
  "nbdraid: array g0 is nested in array top: changing its members is not supported" \
  grow "$conf" --raid-devices 3 --array g0
stop_server
