#!/usr/bin/env bash
# Two servers, same members: no split brain.  A server that serves an
# array keeps a heartbeat beside every member's superblock; a second
# server that reaches the same NBD members sees it move and refuses,
# naming the owner, while the first serves on.  Once the first is
# killed with kill -9, a new server starts after watching the stopped
# heartbeat for 5 beats; with force=true another takes the array at
# once, and the one it was taken from stops writing.  Local members
# are locked: a second server on the same files is refused at once.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdsh

host=$(hostname)
nbd_array mh 1 - - 2 32M
# conf_with SOCKET: the array's config with a control socket of its own
conf_with () {
  sed "s|^socket = .*|socket = $T/$1.ctl|" "$conf" > "$T/$1.conf"
  echo "$T/$1.conf"
}
conf_b=$(conf_with b)
conf_c=$(conf_with c)

start_server "$conf"
a_pid=$server_pid
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"

# second_server CONF LOG [params]: nbdkit on a socket of its own, in
# the background; sets $second_pid and $second_uri.
second_server () {
  local conf=$1 log=$2
  shift 2
  rm -f "$T/$log.sock" "$T/$log.pid"
  nbdkit -f -U "$T/$log.sock" -P "$T/$log.pid" "$PLUGIN" "$conf" "$@" \
    2>> "$T/$log.log" &
  second_pid=$!
  cleanup_fn "kill -9 $second_pid 2>/dev/null"
  second_uri="nbd+unix:///?socket=$T/$log.sock"
}

# The second server on the same NBD members is refused, naming the
# first; long before the 5 s a stopped heartbeat is watched.
second_server "$conf_b" b
wait_for 4 sh -c "! kill -0 $second_pid 2>/dev/null" ||
  die "a second server kept running: $(cat "$T/b.log")"
wait "$second_pid" && die "the second server exited 0"
grep -q "error: array test: in use by host $host (pid $a_pid): its heartbeat on member 0 (nbd+unix:.*) goes on; stop that server, or fence that host and start with force=true" \
  "$T/b.log" || die "refusal: $(cat "$T/b.log")"
nbdcopy "$uri" "$T/back" && cmp "$T/data" "$T/back" ||
  die "the first server's data changed"
echo "ok: a second server is refused, naming the owner"

grep -q "Owner : host $host, pid $a_pid, serving" \
  <<< "$("$NBDRAID" examine "$(sed -n 's/^member = //p' "$conf" | head -1)")" ||
  die "examine shows no owner: $("$NBDRAID" examine "$(sed -n 's/^member = //p' "$conf" | head -1)")"

# kill -9: no clean stop, the record still says serving.  The next
# server watches the heartbeat stand still, then takes the array.
kill -9 "$a_pid"
wait "$a_pid" 2>/dev/null || :
server_pid=
start=$(date +%s%N)
second_server "$conf_b" b2
wait_for 15 test -s "$T/b2.pid" || die "no start after the owner died: $(cat "$T/b2.log")"
waited_ms=$(( ($(date +%s%N) - start) / 1000000 ))
b_pid=$second_pid
b_uri=$second_uri
[ "$waited_ms" -ge 4500 ] || die "started after $waited_ms ms, before 5 beats"
grep -q "info: array test: host $host (pid $a_pid) served it and did not stop" \
  "$T/b2.log" || die "no watch notice: $(cat "$T/b2.log")"
grep -q "warning: array test: the heartbeat of host $host (pid $a_pid) stood still for 5.0 s: taking the array over" \
  "$T/b2.log" || die "no takeover warning: $(cat "$T/b2.log")"
nbdcopy "$b_uri" "$T/back" && cmp "$T/data" "$T/back" ||
  die "data lost across the kill -9"
echo "ok: after kill -9 the next server starts after ${waited_ms} ms"

# force=true: taken without watching (it waits two of the owner's
# beats for it to see the new record), and the server it was taken from
# refuses writes from its next heartbeat on.
start=$(date +%s%N)
second_server "$conf_c" c force=true
wait_for 10 test -s "$T/c.pid" || die "force=true did not start: $(cat "$T/c.log")"
forced_ms=$(( ($(date +%s%N) - start) / 1000000 ))
grep -q "watching its heartbeat" "$T/c.log" && die "force=true watched first"
[ "$forced_ms" -lt 10000 ] || die "force=true took $forced_ms ms"
grep -q "warning: array test: taking it over from host $host (pid $b_pid) (force=true)" \
  "$T/c.log" || die "no force warning: $(cat "$T/c.log")"
wait_for 5 grep -q "error: array test: taken over by host $host (pid $second_pid)" \
  "$T/b2.log" || die "the old owner did not notice: $(cat "$T/b2.log")"
nbdsh -u "$b_uri" -c 'h.pwrite(b"x" * 4096, 0)' 2> "$T/b-write.err" &&
  die "the server taken over still accepts writes"
grep -Eq "Read-only file system|server does not support write" "$T/b-write.err" ||
  die "write to the old owner: $(cat "$T/b-write.err")"
nbdcopy "$second_uri" "$T/back" && cmp "$T/data" "$T/back" ||
  die "data differs after force=true"
kill "$b_pid" "$second_pid"
wait "$b_pid" "$second_pid" 2>/dev/null || :
echo "ok: force=true takes over at once; the old owner stops writing"

# Local members: a second server is refused at once by the lock.
new_array loc 1 - - 2 16M --assume-clean
start_server "$conf"
second_server "$(sed "s|^socket = .*|socket = $T/l.ctl|" "$conf" > "$T/l.conf"; echo "$T/l.conf")" l
wait_for 4 sh -c "! kill -0 $second_pid 2>/dev/null" ||
  die "a second server on local files kept running"
grep -q "error: .*/loc/d0.img: in use by a running array (another process holds it" \
  "$T/l.log" || die "local refusal: $(cat "$T/l.log")"
stop_server
echo "ok: local members are locked"

# heartbeat = off: no record is written (an array only one host reaches).
new_array off 1 - - 2 16M --assume-clean
sed -i '/^\[array\]/a heartbeat = off' "$conf"
start_server "$conf"
grep -q "Owner" <<< "$("$NBDRAID" examine "$T/off/d0.img")" &&
  die "heartbeat = off wrote an owner record"
stop_server
echo "ok: heartbeat = off writes no owner record"
