#!/usr/bin/env bash
# A member that stops answering (nbdkit's pause filter holds its
# requests) is failed once the request timeout (nbd-timeout = 3) passes:
# the array runs degraded instead of stalling, and the client sees no
# error.  The read that meets the silent member takes at least the
# timeout and at most a few of it (never the 30 s default, never a
# hang), and once the member is failed nothing waits on it.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

# Wall-clock milliseconds since $1, an $EPOCHREALTIME.
ms_since () {
  local now=$EPOCHREALTIME
  echo $(( (10#${now//[.,]/} - 10#${1//[.,]/}) / 1000 ))
}

nbd_array r5 5 left-symmetric 16K 3 4M
timeout_s=3
grep -qx "nbd-timeout = $timeout_s" "$conf" ||
  die "the config does not set nbd-timeout = $timeout_s: $(cat "$conf")"
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
stop_server
kill_member r5-2
start_member r5-2 "$T/r5/d2.img" --filter=pause -- pause-control="$T/pause"
start_server "$conf"
# Pause member 2: from now on it holds every request.
/usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"p")
assert s.recv(1) == b"P"
' "$T/pause" || die "could not pause member 2"
start=$EPOCHREALTIME
timeout 60 nbdcopy "$uri" "$T/out" ||
  die "the read through the paused member failed or hung (killed after 60 s)"
read_ms=$(ms_since "$start")
cmp "$T/data" "$T/out" || die "wrong data after the timeout"
# Up to 5 timeouts: a slow machine's margin (it now takes 3), yet well
# short of the 30 s default an ignored nbd-timeout would wait.
[ "$read_ms" -ge $((timeout_s * 1000)) ] ||
  die "the read took $read_ms ms, less than nbd-timeout = $timeout_s s: member 2 was not paused, or failed before its timeout"
[ "$read_ms" -le $((5 * timeout_s * 1000)) ] ||
  die "the read took $read_ms ms, more than 5 x nbd-timeout = $timeout_s s: the timeout was not applied"
start=$EPOCHREALTIME
random_file "$T/data2" "$(export_size)"
timeout 60 nbdcopy "$T/data2" "$uri" || die "write after the timeout failed or hung"
timeout 60 nbdcopy "$uri" "$T/out" || die "read after the timeout failed or hung"
cmp "$T/data2" "$T/out" || die "writes after the timeout lost"
after_ms=$(ms_since "$start")
[ "$after_ms" -lt $((timeout_s * 1000)) ] ||
  die "a write and a read of the degraded array took $after_ms ms, not under nbd-timeout = $timeout_s s: they waited on the failed member"
# The first request to time out fails it (or, with several timing out at
# once, the one that found its connections all closed by the others).
grep -Eq "member 2 .* failed: .*(Connection timed out|not connected)" \
  "$T/nbdkit.log" ||
  die "member 2 not failed by the timeout: $(grep member "$T/nbdkit.log")"
stop_server
echo "ok: a silent member is failed after the timeout (read ${read_ms} ms, then ${after_ms} ms degraded)"
