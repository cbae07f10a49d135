#!/usr/bin/env bash
# A member's server stopped with SIGTERM (an admin, systemd) while the
# array runs.  nbdkit then answers every request with NBD_ESHUTDOWN and
# waits for its clients to hang up: the array must take that as a
# broken connection (hang up, connect again within nbd-timeout), not as
# the member refusing the write, which failed the member and kept its
# connections open, so that the stopped server never exited.  Stopped
# for good, the member fails and the array runs degraded; restarted
# within the timeout, the write goes to the new server.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh

nbd_array r1 1 - - 2 8M
sed -i '/^\[array\]/a nbd-connections = 4' "$conf"
start_server "$conf"
random_file "$T/before" 1M
random_file "$T/after" 1M
nbdsh -u "$uri" -c "h.pwrite(open('$T/before','rb').read(), 0); h.flush()"

pid=${member_pids[r1-0]}
kill -TERM "$pid"
nbdsh -u "$uri" -c "h.pwrite(open('$T/after','rb').read(), 1048576); h.flush()" ||
  die "a write after one copy's server stopped failed"
wait_for 20 sh -c "! kill -0 $pid 2>/dev/null" ||
  die "the stopped member's server still waits for the array's connections"

nbdsh -u "$uri" -c "
assert h.pread(1048576, 0) == open('$T/before','rb').read(), 'before'
assert h.pread(1048576, 1048576) == open('$T/after','rb').read(), 'after'
" || die "data read back differs"
grep -q "degraded" <<< "$("$NBDRAID" status "$conf")" ||
  die "the array is not degraded: $("$NBDRAID" status "$conf")"
echo "ok: a stopped member's server exits, the array runs degraded"

# The other copy's server restarts (systemctl restart): the write that
# finds it stopping waits for the new one.
pid=${member_pids[r1-1]}
kill -TERM "$pid"
random_file "$T/restart" 1M
nbdsh -u "$uri" -c "h.pwrite(open('$T/restart','rb').read(), 2097152); h.flush()" &
writer=$!
wait_for 10 sh -c "! kill -0 $pid 2>/dev/null" ||
  die "the restarting member's server still waits for the array's connections"
start_member r1-1 "$T/r1/d1.img"
wait "$writer" || die "the write across the member server's restart failed"
nbdsh -u "$uri" -c "
assert h.pread(1048576, 2097152) == open('$T/restart','rb').read()
" || die "the write across the restart reads back wrong"
python3 -c "
import sys
sys.exit(open('$T/restart','rb').read() not in open('$T/r1/d1.img','rb').read())
" || die "the restarted member's file does not hold the write"
echo "ok: a write waits for a member's server restarted within nbd-timeout"

# Every member's server gone, nbd-timeout 60 s: the stop gives up on
# them at once (one connect each) instead of a minute an operation.
stop_server
nbd_array st 1 - - 2 4M
sed -i 's/^nbd-timeout = .*/nbd-timeout = 60/' "$conf"
start_server "$conf"
nbdsh -u "$uri" -c "h.pwrite(b'x' * 65536, 0); h.flush()"
kill_member st-0
kill_member st-1
SECONDS=0
stop_server
[ "$SECONDS" -lt 20 ] ||
  die "nbdraid took $SECONDS s to stop with its members' servers gone"
echo "ok: nbdraid stops in $SECONDS s with its members' servers gone"
