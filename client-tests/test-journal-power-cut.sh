#!/usr/bin/env bash
# The RAID6 write hole on a doubly degraded array, and md's write
# journal closing it.  A RAID6 of six NBD exports with two members
# missing is written one 4K block at a time into the first chunk of
# random stripes, while one member's writes wait a second; then the
# server, every member server and the journal's server are killed at
# once, so a stripe's data and parity land apart.  After each restart
# every write that was acknowledged (FUA) reads back and every block
# nobody wrote still holds its first bytes, including the two missing
# members', rebuilt from P and Q.  The same loop with
# consistency-policy = resync must damage such blocks, or the loop
# proves nothing.  Some journal rounds cut the power again while the
# restart replays the journal.  The journal runs write-through, then
# write-back, whose acknowledged writes may be in the journal alone
# (md's data-only stripes) when the power goes.
. "$(dirname "$0")/lib.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

rounds=6
[ "${NBDRAID_LONG_TESTS:-false}" = true ] && rounds=30
WRITER="/usr/bin/python3 $abs_top_srcdir/client-tests/hole-writer.py"
chunk=16384
data=4

# serve_members NAME [WDELAY]: NAME's four members and its journal;
# member 1's writes wait WDELAY
serve_members () {
  local name=$1 i
  for i in 0 1 2 3; do
    if [ "$i" = 1 ] && [ -n "${2-}" ]; then
      start_member "$name-$i" "$T/$name/d$i.img" --filter=delay -- "wdelay=$2"
    else
      start_member "$name-$i" "$T/$name/d$i.img"
    fi
  done
  start_member "$name-j" "$T/$name/j.img"
}

member_pids_of () {
  echo "${member_pids[$1-0]} ${member_pids[$1-1]} ${member_pids[$1-2]}" \
    "${member_pids[$1-3]} ${member_pids[$1-j]}"
}

kill_members () {
  # shellcheck disable=SC2046
  kill -9 $(member_pids_of "$1") 2>/dev/null || :
}

# cut_during_replay NAME: start the server on the cut array with member
# 1's writes slow again, and cut the power once more while the start
# replays the journal
cut_during_replay () {
  serve_members "$1" 1
  rm -f "$T/x.sock"
  nbdkit -f -U "$T/x.sock" "$PLUGIN" "$conf" 2>> "$T/replay-cut.log" &
  local pid=$!
  sleep 1.5
  # shellcheck disable=SC2046
  kill -9 "$pid" $(member_pids_of "$1") 2>/dev/null || :
  wait "$pid" 2>/dev/null || :
  replay_cuts=$((replay_cuts + 1))
}

# power_cut_loop NAME POLICY [JOURNAL-MODE]: sets damaged to the blocks
# nobody wrote that the rounds damaged; dies if an acknowledged write is
# lost
power_cut_loop () {
  local name=$1 policy=$2 mode=${3:-write-through} round out i uris=()
  damaged=0
  make_members "$T/$name" 4 8M
  truncate -s 4M "$T/$name/j.img"
  serve_members "$name"
  for i in 0 1 2 3; do uris+=("nbd+unix:///?socket=$T/$name-$i.sock"); done
  write_config "$T/$name/a.conf" 6 left-symmetric "$chunk" "${uris[@]}" \
    missing missing
  printf 'consistency-policy = %s\nheartbeat = off\nnbd-timeout = 10\n' \
    "$policy" > "$T/$name/extra"
  [ "$policy" = journal ] && echo "journal-mode = $mode" >> "$T/$name/extra"
  sed -i "/^\[array\]/r $T/$name/extra" "$T/$name/a.conf"
  [ "$policy" = journal ] &&
    echo "journal = nbd+unix:///?socket=$T/$name-j.sock" >> "$T/$name/a.conf"
  conf=$T/$name/a.conf
  "$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
    die "create $name: $(tail -1 "$T/create.log")"
  start_server "$conf"
  $WRITER fill "$uri" || die "$name: fill failed"
  stop_server
  kill_members "$name"
  for ((round = 1; round <= rounds; round++)); do
    serve_members "$name" 1
    start_server "$conf" ${dirty_ok[@]+"${dirty_ok[@]}"}
    $WRITER write "$uri" "$chunk" "$data" "$T/$name.ledger" "$round" \
      2>/dev/null &
    # (the first write marks the array dirty through the slow member:
    # a second, before any write is logged)
    sleep "$((1 + RANDOM % 2)).$((RANDOM % 10))"
    # The power cut: the server and its disks at once.
    # shellcheck disable=SC2046
    kill -9 "$server_pid" $(member_pids_of "$name") 2>/dev/null || :
    wait 2>/dev/null || :
    server_pid=
    if [ "$policy" = journal ] && [ $((round % 3)) = 2 ]; then
      cut_during_replay "$name"
    fi
    serve_members "$name"
    # A dirty degraded array without a journal starts only when told.
    [ "$policy" = journal ] || dirty_ok=(start-dirty-degraded=true)
    start_server "$conf" ${dirty_ok[@]+"${dirty_ok[@]}"}
    out=$($WRITER verify "$uri" "$chunk" "$data" "$T/$name.ledger") || :
    stop_server
    kill_members "$name"
    case $out in
      "lost 0 "*) ;;
      *) die "$name round $round: acknowledged writes lost: $out" ;;
    esac
    damaged=$((damaged + ${out##* }))
  done
}

dirty_ok=() replay_cuts=0
power_cut_loop rs resync
[ "$damaged" -gt 0 ] ||
  die "with resync the power cuts damaged nothing: the loop makes no write hole"
echo "ok: resync: $rounds power cuts damaged $damaged blocks nobody wrote"

dirty_ok=()
power_cut_loop jr journal
[ "$damaged" = 0 ] || die "journal: $damaged blocks nobody wrote were damaged"
grep -q "write journal replayed [1-9]" "$T/nbdkit.log" ||
  die "journal: no power cut left a meta block to replay"
echo "ok: journal: $rounds power cuts ($replay_cuts more while the journal" \
  "was replayed), every acknowledged write there, nothing else moved;" \
  "$(grep -c "write journal replayed" "$T/nbdkit.log") replays"

dirty_ok=() replay_cuts=0
: > "$T/nbdkit.log"
power_cut_loop jb journal write-back
[ "$damaged" = 0 ] ||
  die "journal write-back: $damaged blocks nobody wrote were damaged"
grep -q "pages without parity kept to write" "$T/nbdkit.log" ||
  die "write-back: no power cut left a cached page in the journal alone"
echo "ok: journal write-back: $rounds power cuts ($replay_cuts more while" \
  "the journal was replayed), every acknowledged write there, nothing else" \
  "moved; $(grep -c "kept to write" "$T/nbdkit.log") replays kept cached pages"
