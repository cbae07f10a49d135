#!/usr/bin/env bash
# A member that stops answering (nbdkit's pause filter holds its
# requests) is failed once the request timeout (nbd-timeout = 3) passes:
# the array runs degraded instead of stalling, and the client sees no
# error.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

nbd_array r5 5 left-symmetric 16K 3 4M
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
start=$(date +%s)
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "wrong data after the timeout"
random_file "$T/data2" "$(export_size)"
nbdcopy "$T/data2" "$uri"
nbdcopy "$uri" "$T/out"
cmp "$T/data2" "$T/out" || die "writes after the timeout lost"
elapsed=$(( $(date +%s) - start ))
# The first request to time out fails it (or, with several timing out at
# once, the one that found its connections all closed by the others).
grep -Eq "member 2 .* failed: .*(Connection timed out|not connected)" \
  "$T/nbdkit.log" ||
  die "member 2 not failed by the timeout: $(grep member "$T/nbdkit.log")"
stop_server
echo "ok: a silent member is failed after the timeout (whole run ${elapsed}s)"
