#!/usr/bin/env bash
# A check outlasts what stops it, as mdadm's mdcheck does: a budget
# stops it and keeps its position (in state-dir, named for the array's
# UUID), the next check resumes there; so does a check whose server was
# killed with kill -9; a check that ends leaves no state behind; with
# check-interval a run starts by itself, for at most check-budget.  A
# budget that is not a duration is refused.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

new_array r6 6 left-symmetric 64K 6 16M --assume-clean
echo "state-dir = $T/state" > "$T/state.conf"
sed -i '/^\[array\]/r '"$T/state.conf" "$conf"
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy --flush "$T/data" "$uri"
uuid=$(status_json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["uuid"])')
state=$T/state/$uuid.check

# position: the saved position, 0 when there is no file
position () {
  if [ -f "$state" ]; then sed -n 's/^position //p' "$state"; else echo 0; fi
}

# Slow enough to stop halfway: 1 MB/s over 15 MiB of each member.
"$NBDRAID" speed-limit "$conf" 1 1 > /dev/null
out=$("$NBDRAID" check "$conf" --budget 3s) || die "check --budget refused: $out"
grep -q "check started; it stops after 3 s" <<< "$out" || die "check said: $out"
wait_status 20 "j['job']['kind'] == 'idle'"
first=$(position)
[ "$first" -gt 0 ] || die "the budget stopped the check with no position saved"
[ "$first" -lt $((15 * 1024 * 1024)) ] || die "the check ran to the end: $first"
status_is "j['check_paused_bytes'] == $first" ||
  die "status does not show the paused check at $first: $(status_json)"
grep -q "check paused at [0-9.]*% (nbdraid check resumes it)" <<< "$("$NBDRAID" status "$conf")" ||
  die "status text does not show the paused check: $("$NBDRAID" status "$conf")"
echo "ok: a budget of 3 s stopped the check at byte $first of each member"

# A repair does not resume a check: it would skip what was only checked.
out=$("$NBDRAID" repair "$conf" --budget 1s) || die "repair refused: $out"
grep -q "^repair started" <<< "$out" || die "a repair resumed a check: $out"
wait_status 20 "j['job']['kind'] == 'idle'"
out=$("$NBDRAID" check "$conf" --budget 1s) || die "check refused: $out"
grep -q "^check started" <<< "$out" || die "a check resumed a repair: $out"
wait_status 20 "j['job']['kind'] == 'idle'"
first=$(position)

out=$("$NBDRAID" check "$conf") || die "check refused: $out"
grep -q "check resumed at [1-9]" <<< "$out" || die "check did not resume: $out"
# Killed mid-check, after a save beyond the first stop.
wait_for 30 sh -c "[ \$(sed -n 's/^position //p' '$state') -gt $first ]" ||
  die "the running check saved no progress"
saved=$(position)
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || :
server_pid=
start_server "$conf"
out=$("$NBDRAID" check "$conf") || die "check after kill -9 refused: $out"
grep -q "check resumed at" <<< "$out" || die "after kill -9: $out"
status_is "j['job']['done_bytes'] >= $saved" ||
  die "resumed before the saved position $saved: $(status_json)"
"$NBDRAID" speed-limit "$conf" 0 0 > /dev/null
"$NBDRAID" wait "$conf" || die "wait failed"
# Noted as finished at once: nothing paused, and a repair starts anew.
status_is "j['job']['kind'] == 'idle' and j['mismatches'] == 0 and j['check_paused_bytes'] == 0" ||
  die "the resumed check: $(status_json)"
out=$("$NBDRAID" repair "$conf") || die "repair refused: $out"
grep -q "^repair started" <<< "$out" || die "repair after a finished check: $out"
"$NBDRAID" wait "$conf" || die "wait failed"
# The end is noted within a second.
wait_for 10 sh -c "[ ! -e '$state' ]" ||
  die "a finished check left $(cat "$state")"
echo "ok: killed at byte $saved, the check resumed there and finished"

for bad in soon 10q -5m 0; do
  if out=$("$NBDRAID" check "$conf" --budget "$bad" 2>&1); then
    die "--budget $bad was taken"
  fi
  grep -q "ERR --budget '$bad' is not a duration" <<< "$out" ||
    grep -q "is not a duration" <<< "$out" || die "--budget $bad: $out"
done
status_is "j['job']['kind'] == 'idle'" || die "a bad budget started a check"
stop_server
echo "ok: budgets that are not durations are refused"

# Scheduled: every 2 s, a run of at most 1 s.
printf 'check-interval = 2s\ncheck-budget = 1s\n' > "$T/sched.conf"
sed -i '/^\[array\]/r '"$T/sched.conf" "$conf"
start_server "$conf"
"$NBDRAID" speed-limit "$conf" 1 1 > /dev/null
wait_status 20 "j['job']['kind'] == 'check'"
wait_status 20 "j['job']['kind'] == 'idle'"
grep -q '^last-run [1-9]' "$state" || die "no run recorded: $(cat "$state")"
[ "$(position)" -gt 0 ] || die "the scheduled run kept no position"
stop_server
echo "ok: check-interval started a run by itself; check-budget stopped it"
