#!/usr/bin/env bash
# The RAID5 write hole, and md's partial parity log closing it.  A
# degraded RAID5 (one of four members missing) of NBD exports is
# written one 4K block at a time into the first chunk of random
# stripes, while one member's writes wait a second; then the server and
# every member server are killed at once, so a stripe's data and parity
# land apart.  After each restart every write that was acknowledged
# (FUA) reads back and every block nobody wrote still holds its first
# bytes, including the missing member's, rebuilt from parity.  The same
# loop with consistency-policy = bitmap must damage such blocks, or the
# loop proves nothing.  Some PPL rounds cut the power again while the
# restart replays the logs.  The bitmap array, dirty and degraded,
# starts only with start-dirty-degraded=true (md's rule); the PPL one
# needs nothing.
. "$(dirname "$0")/lib.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

rounds=6
[ "${NBDRAID_LONG_TESTS:-false}" = true ] && rounds=30
WRITER="/usr/bin/python3 $abs_top_srcdir/client-tests/hole-writer.py"
chunk=16384

# serve_members NAME [WDELAY]: NAME's three members; member 1's writes
# wait WDELAY
serve_members () {
  local name=$1 i
  for i in 0 1 2; do
    if [ "$i" = 1 ] && [ -n "${2-}" ]; then
      start_member "$name-$i" "$T/$name/d$i.img" --filter=delay -- "wdelay=$2"
    else
      start_member "$name-$i" "$T/$name/d$i.img"
    fi
  done
}

kill_members () {
  kill -9 "${member_pids[$1-0]}" "${member_pids[$1-1]}" \
    "${member_pids[$1-2]}" 2>/dev/null || :
}

# Without a partial parity log, md's rule: a dirty degraded array
# starts only when told to, with a line naming the risk and the option.
refuses_dirty_degraded () {
  local rc=0
  rm -f "$T/x.sock"
  timeout 30 nbdkit -f -U "$T/x.sock" "$PLUGIN" "$conf" 2> "$T/refused.log" ||
    rc=$?
  [ "$rc" != 0 ] || die "a dirty degraded array started unasked"
  grep -q "not stopped cleanly and degraded (role 3, missing).*write hole.*start-dirty-degraded=true" \
    "$T/refused.log" || die "refused, but not as md's rule: $(cat "$T/refused.log")"
}

# cut_during_replay NAME: start the server on the cut array with member
# 1's writes slow again, and cut the power once more while the start
# replays or empties the logs
cut_during_replay () {
  serve_members "$1" 1
  rm -f "$T/x.sock"
  nbdkit -f -U "$T/x.sock" "$PLUGIN" "$conf" 2>> "$T/replay-cut.log" &
  local pid=$!
  sleep 1.5
  kill -9 "$pid" "${member_pids[$1-0]}" "${member_pids[$1-1]}" \
    "${member_pids[$1-2]}" 2>/dev/null || :
  wait "$pid" 2>/dev/null || :
  replay_cuts=$((replay_cuts + 1))
}

# power_cut_loop NAME POLICY: sets damaged to the blocks nobody wrote
# that the rounds damaged; dies if an acknowledged write is lost
power_cut_loop () {
  local name=$1 policy=$2 round out i uris=()
  damaged=0
  make_members "$T/$name" 3 8M
  serve_members "$name"
  for i in 0 1 2; do uris+=("nbd+unix:///?socket=$T/$name-$i.sock"); done
  write_config "$T/$name/a.conf" 5 left-symmetric "$chunk" "${uris[@]}" missing
  printf 'consistency-policy = %s\nheartbeat = off\nnbd-timeout = 10\n' \
    "$policy" > "$T/$name/extra"
  sed -i "/^\[array\]/r $T/$name/extra" "$T/$name/a.conf"
  conf=$T/$name/a.conf
  "$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
    die "create $name: $(tail -1 "$T/create.log")"
  start_server "$conf"
  $WRITER fill "$uri" || die "$name: fill failed"
  stop_server
  kill_members "$name"
  for ((round = 1; round <= rounds; round++)); do
    serve_members "$name" 1
    # A degraded array stays dirty until it is whole again and resynced.
    start_server "$conf" ${dirty_ok[@]+"${dirty_ok[@]}"}
    $WRITER write "$uri" "$chunk" 3 "$T/$name.ledger" "$round" 2>/dev/null &
    sleep "$((RANDOM % 2)).$((RANDOM % 10))"
    # The power cut: the server and its disks at once.
    kill -9 "$server_pid" "${member_pids[$name-0]}" "${member_pids[$name-1]}" \
      "${member_pids[$name-2]}" 2>/dev/null || :
    wait 2>/dev/null || :
    server_pid=
    if [ "$policy" = ppl ] && [ $((round % 3)) = 2 ]; then
      cut_during_replay "$name"
    fi
    serve_members "$name"
    if [ "$policy" = ppl ]; then
      start_server "$conf"
    else
      # (a cut before the first write leaves it clean)
      if "$NBDRAID" examine "$T/$name/d0.img" | grep -q "State : active"; then
        refuses_dirty_degraded
        refused=$((refused + 1))
        dirty_ok=(start-dirty-degraded=true)
      fi
      start_server "$conf" ${dirty_ok[@]+"${dirty_ok[@]}"}
    fi
    out=$($WRITER verify "$uri" "$chunk" 3 "$T/$name.ledger") || :
    stop_server
    kill_members "$name"
    case $out in
      "lost 0 "*) ;;
      *) die "$name round $round: acknowledged writes lost: $out" ;;
    esac
    damaged=$((damaged + ${out##* }))
  done
}

refused=0 dirty_ok=() replay_cuts=0
power_cut_loop bm bitmap
[ "$refused" -gt 0 ] || die "no power cut left the bitmap array dirty"
[ "$damaged" -gt 0 ] ||
  die "with a bitmap the power cuts damaged nothing: the loop makes no write hole"
echo "ok: bitmap: $rounds power cuts damaged $damaged blocks nobody wrote;" \
  "$refused dirty degraded starts refused without start-dirty-degraded"

power_cut_loop ppl ppl
[ "$damaged" = 0 ] || die "ppl: $damaged blocks nobody wrote were damaged"
grep -q "partial parity logs replayed: [1-9]" "$T/nbdkit.log" ||
  die "ppl: no power cut left an entry to replay: $(grep -c replayed "$T/nbdkit.log")"
echo "ok: ppl: $rounds power cuts ($replay_cuts more while the logs were" \
  "replayed), every acknowledged write there, nothing else moved"
