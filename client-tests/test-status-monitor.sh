#!/usr/bin/env bash
# nbdraid status (text and --json) shows the states during and after a
# rebuild, and nbdraid monitor --program runs the program for each
# event of the failure and the rebuild (Fail, RebuildStarted,
# Rebuild20/40/60/80, RebuildFinished, SpareActive: mdadm's names, in
# mdadm's order; see below) with the array and member, as mdadm
# --monitor does; nbdraid wait returns when the rebuild is over, and
# fails if the server dies first.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

create_opts=(--assume-clean)
nbd_spares=1
nbd_array r5 5 left-symmetric 64K 4 24M
echo "speed-max = 3M" > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"
start_server "$conf"

# Healthy.
"$NBDRAID" status "$conf" > "$T/st0"
grep -q "^test : active raid5 \[4/4\] \[UUUU\]" "$T/st0" || die "$(cat "$T/st0")"
grep -Eq "^ +- +spare +nbd\+unix:///\?socket=$T/r5-s0.sock" "$T/st0" || die "$(cat "$T/st0")"

cat > "$T/prog" <<EOF2
#!/bin/sh
echo "\$*" >> "$T/events"
EOF2
chmod +x "$T/prog"
"$NBDRAID" monitor "$conf" --program "$T/prog" > "$T/monitor.out" 2>&1 &
monitor_pid=$!
cleanup_fn "kill $monitor_pid 2>/dev/null"
wait_for 10 grep -q "^monitoring array test" "$T/monitor.out" ||
  die "the monitor did not subscribe: $(cat "$T/monitor.out")"

random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
kill_member r5-3
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "degraded read differs"

# During the rebuild.
wait_status 30 "j['job']['kind'] == 'recovery'"
"$NBDRAID" status "$conf" > "$T/st1"
grep -q "^test : degraded, recovery raid5 \[4/3\] \[UUU_\]" "$T/st1" || die "$(cat "$T/st1")"
grep -Eq "recovery = [0-9.]+% \([0-9]+/[0-9]+ KiB\)" "$T/st1" || die "$(cat "$T/st1")"
grep -Eq "^ +3 +recovering +nbd\+unix:///\?socket=$T/r5-s0.sock" "$T/st1" || die "$(cat "$T/st1")"
grep -Eq "^ +- +faulty +nbd\+unix:///\?socket=$T/r5-3.sock" "$T/st1" || die "$(cat "$T/st1")"
status_is "j['state'].startswith('degraded') and j['devices'][3]['state'] == 'recovering' and 0 <= j['job']['percent'] < 100 and j['job']['target'] == 3" ||
  die "json during the rebuild: $(status_json)"

"$NBDRAID" speed-limit "$conf" 50 0 > /dev/null
# nbdraid wait returns once the rebuild is over, as mdadm --wait does,
# and at once when nothing runs.
timeout 60 "$NBDRAID" wait "$conf" || die "nbdraid wait failed"
status_is "j['job']['kind'] == 'idle' and j['working'] == 4" ||
  die "nbdraid wait returned before the rebuild ended: $(status_json)"
timeout 10 "$NBDRAID" wait "$conf" || die "nbdraid wait on an idle array"
"$NBDRAID" status "$conf" > "$T/st2"
grep -q "^test : active raid5 \[4/4\] \[UUUU\]" "$T/st2" || die "$(cat "$T/st2")"
wait_for 10 grep -q '^SpareActive' "$T/events" || die "no SpareActive: $(cat "$T/events" 2>&1)"
kill "$monitor_pid"
# The order of the events.  mdadm --monitor (Monitor.c, check_array)
# reports a member failing and a spare taking over as Fail,
# RebuildStarted, Rebuild20/40/60/80, RebuildFinished, SpareActive
# (when one poll sees several, its Rebuild* events come before the
# per-device Fail and SpareActive), and no DegradedArray: mdadm(8)
# reports that only for an array already degraded when first seen,
# not for a failure it watches happen.  nbdraid does the same.
order=$(awk '{ printf "%s ", $1 }' "$T/events")
want="Fail RebuildStarted Rebuild20 Rebuild40 Rebuild60 Rebuild80 RebuildFinished SpareActive "
[ "$order" = "$want" ] ||
  die "events in the order: $order; expected: $want; the events: $(cat "$T/events")"
grep -q "^Fail test nbd+unix:///?socket=$T/r5-3.sock " "$T/events" || die "$(cat "$T/events")"
grep -q "^SpareActive test nbd+unix:///?socket=$T/r5-s0.sock\$" "$T/events" || die "$(cat "$T/events")"

# A wait whose server dies fails, rather than report the job done.
"$NBDRAID" speed-limit "$conf" 1 1 > /dev/null
"$NBDRAID" check "$conf" > /dev/null
"$NBDRAID" wait "$conf" 2> "$T/wait.err" &
wait_pid=$!
sleep 1
kill -0 "$wait_pid" 2>/dev/null || die "nbdraid wait returned during a check"
kill -9 "$server_pid"
if wait "$wait_pid"; then die "nbdraid wait succeeded though the server died"; fi
grep -q "the server closed the connection" "$T/wait.err" ||
  die "nbdraid wait: $(cat "$T/wait.err")"
stop_server
echo "ok: status and monitor through a rebuild: $(tr '\n' ';' < "$T/events")"
