#!/usr/bin/env bash
# A device that takes a role again brings its old partial parity log
# with it; md empties the log of a device it adds, and so must we, or a
# later replay takes those stale entries for new ones.  A 3-member
# RAID5 with consistency-policy = ppl logs writes to the first chunk
# of stripe 1 on member 1 (that stripe's parity member); member 1 is
# failed, the stripe's other chunk is written while it is away (no log:
# its parity member is gone), member 1 is re-added and rebuilt, a write
# elsewhere leaves the array dirty and the server is killed.  The
# restart replays the logs; stripe 1's parity must still match its data
# (check finds no mismatch) and the data read back.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdsh

# chunk_writes FILE CHUNK...: a 4K FUA write into each 64K CHUNK (array
# order), applied to FILE too
chunk_writes () {
  local file=$1 c
  shift
  for c in "$@"; do
    head -c 4096 /dev/urandom > "$T/piece"
    nbdsh -u "$uri" -c "h.pwrite(open('$T/piece', 'rb').read(), $((c * 65536 + 8192)), nbd.CMD_FLAG_FUA)"
    dd if="$T/piece" of="$file" bs=4096 seek=$((c * 16 + 2)) conv=notrunc status=none
  done
}

new_array pp 5 left-symmetric 64K 3 16M --assume-clean
sed -i '/^\[array\]/a consistency-policy = ppl' "$conf"
"$NBDRAID" create --force --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create: $(cat "$T/create.log")"
"$NBDRAID" examine --json "$T/pp/d0.img" | /usr/bin/python3 -c '
import json, sys
m = json.load(sys.stdin)[0]
assert m["ppl"] == {"offset_sectors": 8, "size_sectors": 2048}, m
assert m["feature_map"] & 0x400, m' || die "examine --json shows no PPL"
start_server "$conf"
status_is "j['consistency_policy'] == 'ppl'" || die "status: $(status_json)"
random_file "$T/data" "$(export_size)"
nbdcopy --flush "$T/data" "$uri"
# Stripe 1 is chunks 2 and 3; left-symmetric puts its parity on member 1.
chunk_writes "$T/data" 2
"$NBDRAID" fail "$conf" 1 > /dev/null || die "cannot fail member 1"
chunk_writes "$T/data" 3
out=$("$NBDRAID" re-add "$conf" "$T/pp/d1.img" 2>&1) || die "re-add refused: $out"
wait_status 60 "j['working'] == 3 and j['job']['kind'] == 'idle'"
# Stripe 2 (chunks 4 and 5) logs on member 0: the array is dirty.
chunk_writes "$T/data" 4
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || :
server_pid=

start_server "$conf"
grep -q "partial parity logs replayed" "$T/nbdkit.log" ||
  die "no replay: $(cat "$T/nbdkit.log")"
nbdcopy "$uri" "$T/back"
cmp "$T/data" "$T/back" || die "the data differs"
"$NBDRAID" check "$conf" > /dev/null
wait_status 120 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" ||
  die "stripe 1's parity was replayed from a stale log: $(status_json)"
stop_server
check_members_hold "$T/data"
echo "ok: a re-added member's old log is emptied; the replay keeps parity right"
