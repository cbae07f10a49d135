#!/usr/bin/env bash
# The systemd units (systemd/) as systemd would run them: each passes
# systemd-analyze verify as an instance; nbdraid@.service's own command
# lines, with /etc/nbdraid and /run/nbdraid moved under $T/root, serve
# the array as soon as ExecStart returns and the pid file exists, stop
# it clean on SIGTERM (systemd's stop), fail at once, leaving nothing
# running, when the array cannot start, and start again after a crash;
# nbdraid-check@'s command scrubs the array and nbdraid-monitor@'s
# reports it.
. "$(dirname "$0")/lib.sh"
requires systemd-analyze
requires nbdkit
requires nbdsh

units=$abs_top_builddir/systemd
for u in nbdraid@.service nbdraid-check@.service nbdraid-check@.timer \
         nbdraid-monitor@.service; do
  [ -f "$units/$u" ] || die "$units/$u is not built"
  ! grep -n '@[A-Za-z_]*@' "$units/$u" ||
    die "$u: a placeholder was not substituted"
done

# Each unit as the instance "test", with this build's nbdraid and plugin
# in place of the installed ones: verify wants commands that exist.
mkdir -p "$T/units"
for f in "$units"/*@.service "$units"/*@.timer; do
  name=$(basename "$f")
  sed -e "/^Exec/ s#[^ =]*/nbdraid #$NBDRAID #" \
      -e "/^Exec/ s#[^ =]*/nbdkit-raid-plugin\.so #$PLUGIN #" \
      "$f" > "$T/units/${name/@./@test.}"
done
# verify also runs man for each Documentation= page: give it the built ones.
mkdir -p "$T/man/man1" "$T/man/man8"
if [ -f "$abs_top_builddir/nbdraid.8" ]; then
  cp "$abs_top_builddir/nbdkit-raid-plugin.1" "$T/man/man1/"
  cp "$abs_top_builddir/nbdraid.8" "$T/man/man8/"
  man_opt=
else
  man_opt=--man=no              # built without pod2man
fi
MANPATH=$T/man systemd-analyze verify $man_opt "$T"/units/* \
  > "$T/verify.out" 2>&1 || die "systemd-analyze verify: $(cat "$T/verify.out")"
[ ! -s "$T/verify.out" ] || die "systemd-analyze verify: $(cat "$T/verify.out")"
echo "ok: systemd-analyze verify passes" $(ls "$T/units")

# The unit's paths under $T/root; what systemd makes for the service
# (RuntimeDirectory=, StateDirectory=) made here.
root=$T/root
mkdir -p "$root/etc/nbdraid"
mkdir -p -m 0700 "$root/run/nbdraid" "$root/var/lib/nbdraid"
make_members "$root/srv/disks" 3 32M
conf=$root/etc/nbdraid/test.conf
cat > "$conf" <<EOF
[array]
name = test
level = 5
chunk = 64K
socket = $root/run/nbdraid/test.sock
state-dir = $root/var/lib/nbdraid
[members]
member = $root/srv/disks/d0.img
member = $root/srv/disks/d1.img
member = $root/srv/disks/d2.img
EOF
"$NBDRAID" create --assume-clean "$conf" > /dev/null 2>> "$T/create.log" ||
  die "nbdraid create: $(cat "$T/create.log")"
members=$(member_paths "$root/srv/disks" 3)
pidfile=$root/run/nbdraid/test.pid
sock=$root/run/nbdraid/test.nbd
uri="nbd+unix:///?socket=$sock"

# unit_lines KEY UNIT: the values of KEY= in UNIT (e.g. ExecStart),
# for the instance "test", the paths moved under $root.
unit_lines () {
  sed -n "s/^$1=//p" "$T/units/$2" |
    sed -e 's/%i/test/g' -e "s#/etc/nbdraid#$root/etc/nbdraid#g" \
        -e "s#/run/nbdraid#$root/run/nbdraid#g"
}

# run_lines KEY UNIT: run those command lines one after the other, as
# systemd does: split on spaces, a leading "-" lets the command fail.
run_lines () {
  local line argv
  while IFS= read -r line; do
    read -r -a argv <<< "${line#-}"
    if [ "${line:0:1}" = - ]; then
      "${argv[@]}" || :
    else
      "${argv[@]}" || return 1
    fi
  done < <(unit_lines "$1" "$2")
}

stop_unit_server () {
  local pid
  [ -s "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || return 0
  wait_for 10 sh -c "! kill -0 $pid 2>/dev/null" || kill -9 "$pid"
}
cleanup_fn stop_unit_server

# The monitor first, as the unit runs it (stdout kept, for the test):
# it waits for the server and says NewArray when it comes.
[ "$(unit_lines ExecStart nbdraid-monitor@test.service | wc -l)" = 1 ] ||
  die "nbdraid-monitor@.service: not one ExecStart"
read -r -a monitor <<< "$(unit_lines ExecStart nbdraid-monitor@test.service)"
"${monitor[@]}" > "$T/monitor.out" 2> "$T/monitor.err" &
mon=$!
cleanup_fn "kill $mon 2>/dev/null"

# Start: once ExecStart returns 0 the NBD socket is there; the pid file
# follows (systemd waits for it); the array serves what is written.
grep -qx 'Type=forking' "$T/units/nbdraid@test.service" ||
  die "nbdraid@.service is not Type=forking"
[ "$(unit_lines PIDFile nbdraid@test.service)" = "$pidfile" ] ||
  die "nbdraid@.service: PIDFile is not the pid file nbdkit writes"
run_lines ExecStartPre nbdraid@test.service
run_lines ExecStart nbdraid@test.service 2> "$T/start.err" ||
  die "ExecStart failed: $(cat "$T/start.err")"
[ -S "$sock" ] || die "ExecStart returned with no socket $sock"
wait_for 10 test -s "$pidfile" || die "no pid file $pidfile after ExecStart"
pid=$(cat "$pidfile")
[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = nbdkit ] ||
  die "the pid file names $pid, not a running nbdkit"
random_file "$T/piece" $((1024 * 1024))
nbdsh -u "$uri" -c "h.pwrite(open('$T/piece', 'rb').read(), 4 << 20)" \
  -c 'h.flush()' || die "write through $uri failed"
nbdsh -u "$uri" \
  -c "import sys; sys.stdout.buffer.write(h.pread(1 << 20, 4 << 20))" \
  > "$T/back" || die "read through $uri failed"
cmp "$T/piece" "$T/back" || die "the array read back other bytes"
"$NBDRAID" status "$conf" > /dev/null || die "nbdraid status failed"
echo "ok: ExecStart returned with the array served, pid file $pid"

# The check unit's command scrubs it; the monitor reports the scrub.
wait_for 15 grep -q "NewArray test" "$T/monitor.out" ||
  die "the monitor did not find the server: $(cat "$T/monitor.out" "$T/monitor.err")"
run_lines ExecStart nbdraid-check@test.service > "$T/check.out" 2>&1 ||
  die "nbdraid-check@'s ExecStart failed: $(cat "$T/check.out")"
wait_for 30 grep -q "RebuildFinished test mismatches found: 0" \
  "$T/monitor.out" || die "no RebuildFinished: $(cat "$T/monitor.out")"
echo "ok: nbdraid-check@ scrubbed the array, nbdraid-monitor@ reported it"

# Stop: no ExecStop, so systemd sends SIGTERM to the main pid, then runs
# ExecStopPost.  The array is left clean; the monitor waits on.
[ -z "$(unit_lines ExecStop nbdraid@test.service)" ] ||
  die "nbdraid@.service has an ExecStop: this test sends SIGTERM only"
kill "$pid"
wait_for 30 sh -c "! kill -0 $pid 2>/dev/null" || die "nbdkit ignored SIGTERM"
run_lines ExecStopPost nbdraid@test.service
[ ! -e "$sock" ] || die "ExecStopPost left $sock"
for m in $members; do
  "$NBDRAID" examine "$m" > "$T/examine.out" || die "examine $m failed"
  grep -Eq '^ +State : clean$' "$T/examine.out" ||
    die "$m is not clean after the stop: $(cat "$T/examine.out")"
done
wait_for 10 grep -q "DeviceDisappeared test" "$T/monitor.out" ||
  die "no DeviceDisappeared: $(cat "$T/monitor.out")"
kill -0 "$mon" 2>/dev/null || die "the monitor exited: $(cat "$T/monitor.err")"
rm -f "$pidfile"                # as systemd does after the stop
echo "ok: SIGTERM left every member clean; the monitor waits for the server"

# An array that cannot start even degraded: ExecStart fails at once,
# naming the members, with nothing left running and no pid file.
mv "$root/srv/disks/d1.img" "$root/srv/disks/d1.away"
mv "$root/srv/disks/d2.img" "$root/srv/disks/d2.away"
run_lines ExecStartPre nbdraid@test.service
t0=$SECONDS
if run_lines ExecStart nbdraid@test.service 2> "$T/start.err"; then
  die "ExecStart succeeded with two members of three missing"
fi
[ $((SECONDS - t0)) -lt 20 ] || die "a start that cannot succeed waited"
grep -q "d1.img" "$T/start.err" ||
  die "the start error does not name the member: $(cat "$T/start.err")"
[ ! -e "$pidfile" ] || die "a failed start left a pid file"
run_lines ExecStopPost nbdraid@test.service
mv "$root/srv/disks/d2.away" "$root/srv/disks/d2.img"
echo "ok: a start that cannot assemble fails at once: $(head -1 "$T/start.err")"

# One member missing: the last resort waits (its 30 s made 2 here),
# then serves degraded and says so.
sed -i 's/degraded-after=30s/degraded-after=2s/' "$T/units/nbdraid@test.service"
run_lines ExecStartPre nbdraid@test.service
t0=$SECONDS
run_lines ExecStart nbdraid@test.service 2> "$T/start.err" ||
  die "the last resort did not start it: $(cat "$T/start.err")"
[ $((SECONDS - t0)) -ge 2 ] || die "started degraded without waiting"
grep -q "warning: array test: started degraded after waiting 2 s" "$T/start.err" ||
  die "no last-resort warning: $(cat "$T/start.err")"
wait_for 10 test -s "$pidfile" || die "no pid file after the last resort"
kill "$(cat "$pidfile")"
wait_for 20 sh -c "! kill -0 $(cat "$pidfile") 2>/dev/null" || die "nbdkit did not stop"
rm -f "$pidfile"
run_lines ExecStopPost nbdraid@test.service
mv "$root/srv/disks/d1.away" "$root/srv/disks/d1.img"
sed -i 's/degraded-after=2s/degraded-after=30s/' "$T/units/nbdraid@test.service"
echo "ok: one member missing: waited, then served degraded"

# A crash leaves nbdkit's socket behind; ExecStopPost, which systemd
# runs before Restart= starts it again, clears it, so the restart serves.
run_lines ExecStartPre nbdraid@test.service
run_lines ExecStart nbdraid@test.service 2> "$T/start.err" ||
  die "ExecStart failed: $(cat "$T/start.err")"
wait_for 10 test -s "$pidfile" || die "no pid file $pidfile after ExecStart"
pid=$(cat "$pidfile")
kill -9 "$pid"
wait_for 10 sh -c "! kill -0 $pid 2>/dev/null" || die "nbdkit survived kill -9"
[ -S "$sock" ] || die "nbdkit 1.32 left no socket behind: is this test still needed?"
run_lines ExecStopPost nbdraid@test.service
rm -f "$pidfile"
run_lines ExecStartPre nbdraid@test.service
run_lines ExecStart nbdraid@test.service 2> "$T/start.err" ||
  die "the restart after a crash failed: $(cat "$T/start.err")"
wait_for 10 test -s "$pidfile" || die "no pid file $pidfile after the restart"
nbdsh -u "$uri" \
  -c "import sys; sys.stdout.buffer.write(h.pread(1 << 20, 4 << 20))" \
  > "$T/back" || die "read after the restart failed"
cmp "$T/piece" "$T/back" || die "the array read back other bytes after the restart"
echo "ok: after kill -9, ExecStopPost clears the socket and the restart serves"
