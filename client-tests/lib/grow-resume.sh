# nbdraid client tests: a grow that recovers a new member, cut short by
# kill -9 and resumed (grow --raid-devices, grow --level 6).  Source
# after lib.sh:
#   . "$abs_top_srcdir/client-tests/lib/grow-resume.sh"
#   grow_until_crash 2 "$dir/s0.img" --raid-devices 3
#   ... what the superblocks and the config say now ...
#   members="..."; recovery_resumes 2 "$dir/s0.img"

# grow_until_crash ROLE SPARE GROW-ARGS...: serve $conf's array at
# 1 MiB/s of recovery, fill it with random data ($T/data), add SPARE,
# nbdraid grow GROW-ARGS; kill -9 the server once the recovery of
# member ROLE passed 6 MiB (a recovery checkpoints at most once a
# second: at 1 MiB/s its last checkpoint is then past 4 MiB).
grow_until_crash () {
  local role=$1 spare=$2
  shift 2
  array_option "speed-min = 1M" "speed-max = 1M"
  start_server "$conf"
  random_file "$T/data" "$(export_size)"
  nbdcopy --flush "$T/data" "$uri"
  "$NBDRAID" add "$conf" "$spare" > /dev/null || die "add refused"
  "$NBDRAID" grow "$conf" "$@" > /dev/null || die "grow $* refused"
  wait_status 60 "j['devices'][$role]['recovered_bytes'] >= 6 * 1048576"
  crash_server
}

# recovery_resumes ROLE SPARE: restarted at full speed, the recovery of
# member ROLE (SPARE) resumes past 4 MiB, not from 0, and completes with
# every member in $members working; check finds no mismatch, $T/data
# reads back and the members hold it in md's layout.  Sets resumed, the
# byte the recovery went on from.
recovery_resumes () {
  local role=$1 spare=$2 started
  started="recovery of member $role ($spare) starts at"
  sed -i '/^speed-/d' "$conf"
  start_server "$conf"
  "$NBDRAID" wait "$conf" > /dev/null
  resumed=$(grep -o "$started [0-9]*" "$T/nbdkit.log" | tail -1 | grep -o '[0-9]*$')
  [ "$(grep -c "$started" "$T/nbdkit.log")" = 2 ] &&
    [ "$resumed" -ge $((4 * 1048576)) ] ||
    die "the recovery did not resume past 4 MiB: $(grep 'recovery of' "$T/nbdkit.log")"
  # shellcheck disable=SC2086
  set -- $members
  wait_status 60 "j['working'] == $# and j['job']['kind'] == 'idle'"
  "$NBDRAID" check "$conf" > /dev/null || die "check refused"
  wait_status 60 "j['job']['kind'] == 'idle'"
  status_is "j['mismatches'] == 0" || die "mismatches after the resumed recovery: $(status_json)"
  nbdcopy "$uri" "$T/out"
  cmp "$T/data" "$T/out" || die "data differs after the resumed recovery"
  stop_server
  check_members_hold "$T/data"
}
