# nbdraid client tests: a reshape losing members.  Source after lib.sh:
#   . "$abs_top_srcdir/client-tests/lib/reshape-faults.sh"

# goes_on_degraded MB WHAT: the reshape, WHAT ("degraded"), gets past
# MB MiB of each member; the array reads back as $T/data, and new data
# over its first half (in flight across a kill that may follow) goes in
# and into $T/data.
goes_on_degraded () {
  local mb=$1 what=$2 size
  size=$(export_size)
  wait_status 30 "j['job']['kind'] == 'reshape' and j['job']['done_bytes'] >= $mb * 1048576" ||
    die "the reshape does not go on $what: $(status_json) $(tail -3 "$T/nbdkit.log")"
  nbdcopy "$uri" "$T/out" || die "reads fail in the $what reshape"
  cmp "$T/data" "$T/out" || die "the data differs in the $what reshape"
  head -c $((size / 2)) /dev/urandom > "$T/half"
  nbdcopy --flush "$T/half" "$uri" || die "writes fail in the $what reshape"
  dd if="$T/half" of="$T/data" conv=notrunc status=none
}

# killed_and_resumed: kill -9 the server and start it again (dirty and
# degraded: md's rule wants that said); the reshape resumes past its
# start, the data reads back as $T/data, and it runs to its end
# unthrottled.  The reshape is held (speed-max) until here: had it
# ended before the compare, the client would have seen the grown array.
killed_and_resumed () {
  kill -9 "$server_pid"
  wait "$server_pid" 2>/dev/null || :
  server_pid=
  start_server "$conf" start-dirty-degraded=true
  grep -q "reshape from 4 to 5 members resumes at new stripe [1-9]" "$T/nbdkit.log" ||
    die "the reshape did not resume: $(grep -i reshape "$T/nbdkit.log" | tail -3)"
  nbdcopy "$uri" "$T/out"
  cmp "$T/data" "$T/out" || die "the data differs after the kill"
  "$NBDRAID" speed-limit "$conf" 0 0 > /dev/null
  "$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
}
