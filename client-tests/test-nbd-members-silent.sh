#!/usr/bin/env bash
# Two members of a RAID6 over NBD sit on a host that takes connections
# and never answers (a socket that listens, silent): the array starts
# degraded after one nbd-connect-timeout (3 s here), not one per silent
# member, names both members and why, and serves the data written
# before, rebuilt from P and Q.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

nbd_array r6 6 left-symmetric 64K 6 8M
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy --flush "$T/data" "$uri"
stop_server

# Members 4 and 5's servers go; sockets that never speak take their place.
for i in 4 5; do
  kill_member "r6-$i"
  rm -f "$T/r6-$i.sock"
  /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(64)
time.sleep(120)' "$T/r6-$i.sock" &
  cleanup_fn "kill $! 2>/dev/null"
  wait_for 10 test -S "$T/r6-$i.sock" || die "silent socket $i did not appear"
done

: > "$T/nbdkit.log"
begin=$(date +%s%N)
start_server "$conf" degraded=true
took_ms=$(( ($(date +%s%N) - begin) / 1000000 ))
for i in 4 5; do
  grep -q "r6-$i.sock (connect timed out after 3 s)" "$T/nbdkit.log" ||
    die "member $i's timeout not named: $(cat "$T/nbdkit.log")"
done
# One after another the two timeouts take 6 s; at once, 3 and the rest.
[ "$took_ms" -lt 5500 ] ||
  die "the start took $took_ms ms: the silent members' timeouts added up"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "degraded read back differs"
stop_server
echo "ok: two silent members, started degraded in $took_ms ms, data intact"
