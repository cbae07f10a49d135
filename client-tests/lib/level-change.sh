# level_change LEVEL: nbdraid grow --level LEVEL on the array of $conf
# (served at $uri, holding $T/data of $size bytes) under a writer
# rewriting $T/data, then: the status says RAID LEVEL with every member
# working and no job, a check finds no mismatch (a RAID0 has none to
# make), every byte reads back, the members in $members match md's
# layout (md-model.py), and the array assembles again from the config
# with the same bytes.
level_change () {
  local level=$1 out writer
  rm -f "$T/stop"
  ( while [ ! -e "$T/stop" ]; do nbdcopy "$T/data" "$uri" || exit 1; done ) &
  writer=$!
  sleep 0.5
  out=$("$NBDRAID" grow "$conf" --level "$level") || die "grow --level $level refused: $out"
  echo "$out"
  "$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
  sleep 0.3
  touch "$T/stop"
  wait "$writer" || die "the writer failed across the change to RAID$level"
  wait_status 60 "j['level'] == $level and j['job']['kind'] == 'idle' and j['working'] == j['members']"
  if [ "$level" != 0 ]; then
    "$NBDRAID" check "$conf" > /dev/null || die "check refused"
    wait_status 60 "j['job']['kind'] == 'idle'"
    status_is "j['mismatches'] == 0" || die "mismatches as RAID$level: $(status_json)"
  fi
  nbdcopy "$uri" "$T/out"
  cmp "$T/data" "$T/out" || die "data differs as RAID$level"
  stop_server
  check_members_hold "$T/data"
  start_server "$conf"
  [ "$(export_size)" = "$size" ] || die "RAID$level does not assemble from the config"
  nbdcopy "$uri" "$T/out"
  cmp "$T/data" "$T/out" || die "data differs after the restart as RAID$level"
}
