#!/usr/bin/env bash
# One connection to an NBD member carries many requests at once: with
# nbd-connections = 1 and members that take 100 ms per request, eight
# concurrent client writes and reads reach each member together (its
# server's log shows them in flight side by side), and read back right.
# Then a member's server is killed with eight writes in flight on its
# one connection: they all complete on the other mirror, the member is
# failed, and the data reads back.
. "$(dirname "$0")/lib.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

make_members "$T/r1" 2 8M
uris=()
for i in 0 1; do
  start_member "r1-$i" "$T/r1/d$i.img" --filter=log --filter=delay -- \
    logfile="$T/member$i.log" rdelay=100ms wdelay=100ms
  uris+=("$member_uri")
done
write_config "$T/r1/a.conf" 1 - - "${uris[@]}"
sed -i '/^\[array\]/a nbd-connections = 1\nnbd-timeout = 5\nbitmap = none' \
  "$T/r1/a.conf"
"$NBDRAID" create --assume-clean "$T/r1/a.conf" 2>> "$T/create.log" ||
  { cat "$T/create.log" >&2; die "nbdraid create failed"; }
conf=$T/r1/a.conf
members=$(member_paths "$T/r1" 2)

# concurrent URI SEED [KILL-PID]: eight 64K writes at once (the member
# server KILL-PID killed while they are in flight), then eight reads at
# once; the reads must return what was written.
concurrent () {
  /usr/bin/python3 - "$@" <<'PY'
import os, random, signal, sys, time
import nbd
uri, seed = sys.argv[1], int(sys.argv[2])
victim = int(sys.argv[3]) if len(sys.argv) > 3 else None
rng = random.Random(seed)
h = nbd.NBD()
h.connect_uri(uri)
offsets = [i * 512 * 1024 for i in range(8)]
data = [rng.randbytes(65536) for _ in offsets]
cookies = [h.aio_pwrite(d, o) for d, o in zip(data, offsets)]
if victim:
    time.sleep(0.05)            # every write is at the members by now
    os.kill(victim, signal.SIGKILL)
while h.aio_in_flight() > 0:
    h.poll(-1)
for c in cookies:
    h.aio_command_completed(c)  # raises if a write failed
bufs = [nbd.Buffer(65536) for _ in offsets]
cookies = [h.aio_pread(b, o) for b, o in zip(bufs, offsets)]
while h.aio_in_flight() > 0:
    h.poll(-1)
for c, b, d, o in zip(cookies, bufs, data, offsets):
    h.aio_command_completed(c)
    if b.to_bytearray() != d:
        sys.exit(f"read at {o} differs from what was written")
h.flush()
h.shutdown()
PY
}

# most_in_flight LOG: the most requests one connection of a member's
# server had in flight at once, from nbdkit's log filter.
most_in_flight () {
  /usr/bin/python3 - "$1" <<'PY'
import collections, re, sys
now = collections.Counter()
most = 0
for line in open(sys.argv[1]):
    m = re.search(r"connection=(\d+) (\.\.\.)?(Read|Write) id=", line)
    if m:
        now[m[1]] += -1 if m[2] else 1
        most = max(most, now[m[1]])
print(most)
PY
}

start_server "$conf"
concurrent "$uri" 1 || die "concurrent writes and reads failed"
for i in 0 1; do
  n=$(most_in_flight "$T/member$i.log")
  [ "$n" -ge 4 ] ||
    die "member $i: at most $n requests in flight on its one connection"
  echo "member $i: up to $n requests in flight on one connection"
done
stop_server
echo "ok: one connection carries concurrent requests"

start_server "$conf"
concurrent "$uri" 2 "${member_pids[r1-1]}" ||
  die "writes in flight to a killed member failed"
grep -q "member 1 .* failed" "$T/nbdkit.log" || die "member 1 not failed"
stop_server
echo "ok: writes in flight survive the death of one mirror's server"
