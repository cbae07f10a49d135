#!/usr/bin/env bash
# kill -9 of the server while writes are behind on a write-mostly copy
# 20 ms away: every flushed write reads back after the restart; writes
# answered but not yet on the far copy leave their bitmap regions dirty,
# and the restart resyncs those regions (and no more than the bitmap
# marks) from the local copy; check then finds 0 mismatches and the
# copies agree byte for byte.
. "$(dirname "$0")/lib.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"
WRITER="/usr/bin/python3 $abs_top_srcdir/client-tests/crash-writer.py"

mkdir -p "$T/w"
truncate -s 32M "$T/w/d0.img" "$T/w/d1.img"
start_member far "$T/w/d1.img" --filter=delay -- wdelay=20ms
conf=$T/w/a.conf
write_config "$conf" 1 - - "$T/w/d0.img" "$member_uri write-mostly"
# heartbeat: each restart waits five of the killed server's beats.
sed -i '/^\[array\]/a write-behind = 256\nbitmap-chunk = 256K\nheartbeat = 100ms' "$conf"
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create: $(cat "$T/create.log")"

# kill_server: SIGKILL, as a crash.  nbdkit 1.32 serving the far copy
# may die too, a moment later, on an assertion (connections.c:
# raw_send_socket: sock >= 0) when its client vanished with requests in
# the delay filter; so the far side is restarted each time too, as a
# far host that rebooted (the writes it had not done are lost with it).
kill_server () {
  kill -9 "$server_pid" 2>/dev/null || :
  wait "$server_pid" 2>/dev/null || :
  server_pid=
  kill_member far
  start_member far "$T/w/d1.img" --filter=delay -- wdelay=20ms
}

: > "$T/ledger"
for round in 1 2 3 4 5; do
  start_server "$conf"
  $WRITER verify "$uri" "$T/ledger" > /dev/null ||
    die "round $round: a flushed write was lost"
  $WRITER write "$uri" "$T/ledger" $((round * 7919)) 40 $((RANDOM % 30)) \
    "$server_pid" 2> /dev/null || :
  kill_server
done
echo "ok: 5 kill -9 rounds with writes in flight"

# One more crash, after a burst of writes answered but not flushed: the
# far copy lags behind the local one by most of them.  The burst writes
# over some of the ledger's slots, so the ledger is checked first.
start_server "$conf"
$WRITER verify "$uri" "$T/ledger" || die "a flushed write was lost"
/usr/bin/python3 - "$uri" "$server_pid" "$T/burst" <<'PY' || die "burst failed"
import os, signal, sys
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
out = open(sys.argv[3], "w")
for i in range(200):
    off = 16 * 1024 * 1024 + i * 4096
    buf = os.urandom(4096)
    h.pwrite(buf, off)
    out.write("%d %s\n" % (off, buf.hex()))
out.close()
os.kill(int(sys.argv[2]), signal.SIGKILL)
PY
kill_server
off=$((2048 * 512)) size=$((30 * 1024 * 1024))
cmp -s -n "$size" -i "$off:$off" "$T/w/d0.img" "$T/w/d1.img" &&
  die "the far copy did not lag: nothing was written behind"
dirty=$("$NBDRAID" examine "$T/w/d0.img" |
        sed -n 's/^ *Bitmap Dirty : \([0-9]*\) of .*/\1/p')
[ "${dirty:-0}" -gt 0 ] || die "no dirty bitmap regions after the crash"
echo "ok: after the crash the far copy lags, $dirty bitmap regions dirty"

start_server "$conf"
# Answered writes the local copy had survive too: it is the source.
/usr/bin/python3 - "$uri" "$T/burst" <<'PY' || die "an answered write was lost"
import sys
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
for line in open(sys.argv[2]):
    off, data = line.split()
    if h.pread(4096, int(off)) != bytes.fromhex(data):
        sys.exit("the write at %s reads back wrong" % off)
PY
wait_status 120 "j['synced'] and j['job']['kind'] == 'idle'"
work=$(last_work_bytes)
[ "$work" -gt 0 ] && [ "$work" -le $((dirty * 256 * 1024)) ] ||
  die "the resync worked on $work bytes for $dirty dirty 256K regions"
"$NBDRAID" check "$conf" > /dev/null
wait_status 120 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "check found mismatches: $(status_json)"
stop_server
cmp -n "$size" -i "$off:$off" "$T/w/d0.img" "$T/w/d1.img" ||
  die "the copies differ after the resync and a clean stop"
echo "ok: the restart resynced $work bytes of $dirty dirty regions; check = 0"
