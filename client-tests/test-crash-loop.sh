#!/usr/bin/env bash
# kill -9 in the middle of writes, again and again, for RAID1, RAID5,
# RAID6 and RAID10: after each restart every write the server had made
# durable (FUA, or followed by a flush) reads back, the resync finishes,
# and check finds no mismatch.  20 rounds each (100 with --long).
. "$(dirname "$0")/lib.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

rounds=20 size=6M
[ "${NBDRAID_LONG_TESTS:-false}" = true ] && rounds=100 size=24M
WRITER="/usr/bin/python3 $abs_top_srcdir/client-tests/crash-writer.py"

crash_loop () {
  local name=$1 round seed target
  shift
  new_array "$name" "$@" --assume-clean
  # A restart after kill -9 watches the dead server's heartbeat for five
  # beats before it takes the array over: beats of 100 ms keep that wait
  # from being most of each round.
  printf 'bitmap-chunk = 256K\nheartbeat = 100ms\n' > "$T/bm"
  sed -i "/^\[array\]/r $T/bm" "$conf"
  "$NBDRAID" create --force --assume-clean "$conf" 2>> "$T/create.log"
  : > "$T/$name.log"
  for ((round = 1; round <= rounds; round++)); do
    start_server "$conf"
    # Earlier rounds' writes must all be there before we add more.
    $WRITER verify "$uri" "$T/$name.log" > /dev/null ||
      die "$name round $round: a flushed write was lost"
    seed=$((round * 7919))
    # The writer kills the server after a random number of recorded
    # writes, with more in flight.
    $WRITER write "$uri" "$T/$name.log" "$seed" 40 $((RANDOM % 30)) \
      "$server_pid" 2> /dev/null || :
    kill -9 "$server_pid" 2>/dev/null || :
    wait "$server_pid" 2>/dev/null || :
    server_pid=
  done
  start_server "$conf"
  $WRITER verify "$uri" "$T/$name.log" || die "$name: a flushed write was lost"
  wait_status 120 "j['synced'] and j['job']['kind'] == 'idle'"
  "$NBDRAID" check "$conf" > /dev/null
  wait_status 120 "j['job']['kind'] == 'idle'"
  status_is "j['mismatches'] == 0" || die "$name: check found mismatches: $(status_json)"
  stop_server
  echo "ok: $name survived $rounds kill -9 rounds; check = 0"
}

crash_loop r1 1 - - 2 "$size"
crash_loop r5 5 left-symmetric 16K 4 "$size"
crash_loop r6 6 left-symmetric 16K 5 "$size"
crash_loop r10 10 n2 16K 4 "$size"
