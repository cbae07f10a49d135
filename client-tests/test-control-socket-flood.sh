#!/usr/bin/env bash
# A refused peer holds nothing: with the control socket's mode loosened
# to 0666, user nobody opens 1100 connections to it and never sends a
# request.  The server, under the common soft limit of 1024 open files,
# must keep serving NBD clients and root's nbdraid.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdinfo
requires_root
requires setpriv
id nobody > /dev/null 2>&1 || skip "no user nobody"

new_array a 1 - - 2 4M --assume-clean
old_limit=$(ulimit -Sn)
ulimit -Sn 1024                 # systemd's default soft LimitNOFILE
start_server "$conf"
ulimit -Sn "$old_limit"
csock=${conf%.conf}.sock
chmod 755 "$T" "$T/a"
chmod 666 "$csock"

setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
  /usr/bin/python3 - "$csock" > "$T/flood.out" 2>&1 <<'PY' &
import socket, sys, time
held, deadline = [], time.monotonic() + 10
while len(held) < 1100 and time.monotonic() < deadline:
    s = socket.socket(socket.AF_UNIX)
    s.setblocking(False)
    try:
        s.connect(sys.argv[1])
        held.append(s)
    except BlockingIOError:     # the backlog is full: let the server accept
        s.close()
        time.sleep(0.001)
print("holding", len(held), flush=True)
time.sleep(60)
PY
flood=$!
cleanup_fn "kill $flood 2>/dev/null"
wait_for 20 grep -qs holding "$T/flood.out" || die "the flood did not start"
echo "nobody is $(cat "$T/flood.out") connections to the control socket"

timeout 10 nbdinfo --size "$uri" > /dev/null ||
  die "NBD clients are no longer served while nobody floods the control socket"
echo "ok: NBD clients still served"
out=$(timeout 10 "$NBDRAID" status "$conf" 2>&1) ||
  die "root's nbdraid status fails while nobody floods: $out"
echo "ok: root's nbdraid status still served"
kill "$flood"
stop_server
