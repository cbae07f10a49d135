#!/usr/bin/env bash
# nbdraid monitor, as mdadm --monitor: started after a member failed it
# reports DegradedArray (and SparesMissing for a listed spare that is
# not there); --test adds a TestMessage, --oneshot reports and exits; a
# check's end is RebuildFinished with mdadm's "mismatches found"; when
# the server dies the monitor says DeviceDisappeared and, with
# --no-reconnect, exits 1, or else waits and says NewArray when the
# server is back.  --mail hands the alarming events to sendmail.
. "$(dirname "$0")/lib.sh"
requires nbdkit

new_array r5 5 left-symmetric 64K 4 8M --assume-clean
truncate -s 8M "$T/r5/s0.img"
echo "spare = $T/r5/s0.img" >> "$conf"
"$NBDRAID" create --force --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create with a spare failed"
rm "$T/r5/s0.img"               # listed, but gone
start_server "$conf"
"$NBDRAID" fail "$conf" 1 > /dev/null || die "fail refused"

# Started after the failure: how the array stands, then exit.
cat > "$T/prog" <<EOF2
#!/bin/sh
echo "\$*" >> "$T/events"
EOF2
chmod +x "$T/prog"
timeout 20 "$NBDRAID" monitor "$conf" --oneshot --test --program "$T/prog" \
  > "$T/one.out" 2>&1 || die "monitor --oneshot: $(cat "$T/one.out")"
for ev in "DegradedArray test" "SparesMissing test 0 of 1 spares" \
          "TestMessage test"; do
  grep -Eq "^[0-9-]+ [0-9:]+ $ev\$" "$T/one.out" ||
    die "monitor --oneshot did not report '$ev': $(cat "$T/one.out")"
  grep -qx "$ev" "$T/events" || die "--program did not get '$ev': $(cat "$T/events")"
done
echo "ok: a monitor started late reports DegradedArray, SparesMissing, TestMessage"

# --mail: each alarming event (and the test) is one message to sendmail
# -t; a sendmail that fails is reported and the monitor goes on.
cat > "$T/sendmail" <<EOF2
#!/bin/sh
[ "\$1" = -t ] || exit 3
{ cat; echo "----"; } >> "$T/mail"
EOF2
chmod +x "$T/sendmail"
NBDRAID_SENDMAIL=$T/sendmail timeout 20 "$NBDRAID" monitor "$conf" \
  --oneshot --test --mail admin@example.org > "$T/one.out" 2>&1 ||
  die "monitor --mail: $(cat "$T/one.out")"
[ "$(grep -c '^----$' "$T/mail")" = 3 ] || die "not 3 mails: $(cat "$T/mail")"
for ev in DegradedArray SparesMissing TestMessage; do
  grep -q "^Subject: $ev event on test:$(hostname)\$" "$T/mail" ||
    die "no mail for $ev: $(cat "$T/mail")"
done
grep -q "^To: admin@example.org\$" "$T/mail" || die "To: $(cat "$T/mail")"
grep -q "^A DegradedArray event had been detected on array test.\$" "$T/mail" ||
  die "body: $(cat "$T/mail")"
NBDRAID_SENDMAIL=/bin/false timeout 20 "$NBDRAID" monitor "$conf" \
  --oneshot --test --mail admin@example.org > "$T/one.out" 2>&1 ||
  die "monitor with a failing sendmail: $(cat "$T/one.out")"
grep -q "mail to admin@example.org: /bin/false -t failed" "$T/one.out" ||
  die "a failing sendmail was not reported: $(cat "$T/one.out")"
echo "ok: --mail sent DegradedArray, SparesMissing, TestMessage"

# A check's start and end, in mdadm's words.
"$NBDRAID" monitor "$conf" --no-reconnect > "$T/mon.out" 2> "$T/mon.err" &
mon=$!
cleanup_fn "kill $mon 2>/dev/null"
wait_for 10 grep -q "^monitoring array test" "$T/mon.out" ||
  die "the monitor did not subscribe: $(cat "$T/mon.out" "$T/mon.err")"
"$NBDRAID" re-add "$conf" 1 > /dev/null 2>&1 || :
wait_status 30 "j['job']['kind'] == 'idle' and j['working'] == 4"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_for 30 grep -q "RebuildFinished test mismatches found: 0 (on raid level 5)" \
  "$T/mon.out" || die "no RebuildFinished for the check: $(cat "$T/mon.out")"
grep -Eq "^[0-9-]+ [0-9:]+ RebuildStarted test check\$" "$T/mon.out" ||
  die "no RebuildStarted for the check: $(cat "$T/mon.out")"
echo "ok: a check is RebuildStarted ... RebuildFinished, as mdadm says it"

# The server dies: --no-reconnect reports it and exits 1.
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || :
server_pid=
rc=0
timeout 10 tail --pid="$mon" -f /dev/null || die "the monitor outlived its server"
wait "$mon" || rc=$?
[ "$rc" = 1 ] || die "monitor --no-reconnect exited $rc, not 1"
grep -q "DeviceDisappeared test" "$T/mon.out" ||
  die "no DeviceDisappeared: $(cat "$T/mon.out")"
grep -q "the server of array test went away" "$T/mon.err" ||
  die "no word on stderr: $(cat "$T/mon.err")"
echo "ok: --no-reconnect: DeviceDisappeared, exit 1"

# Without it the monitor waits for the server, and says when it is back.
"$NBDRAID" monitor "$conf" > "$T/mon2.out" 2> "$T/mon2.err" &
mon=$!
cleanup_fn "kill $mon 2>/dev/null"
start_server "$conf"
wait_for 10 grep -q "^monitoring array test" "$T/mon2.out" ||
  die "the monitor did not subscribe: $(cat "$T/mon2.out")"
stop_server
wait_for 10 grep -q "DeviceDisappeared test" "$T/mon2.out" ||
  die "no DeviceDisappeared: $(cat "$T/mon2.out")"
kill -0 "$mon" 2>/dev/null || die "the monitor exited: $(cat "$T/mon2.err")"
start_server "$conf"
wait_for 15 grep -q "NewArray test" "$T/mon2.out" ||
  die "no NewArray when the server came back: $(cat "$T/mon2.out" "$T/mon2.err")"
kill "$mon"
stop_server
echo "ok: the monitor waited for the server and reported NewArray"
