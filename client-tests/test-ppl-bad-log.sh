#!/usr/bin/env bash
# A partial parity log entry whose partial parity fails its checksum is
# skipped and named, as md skips it, and the array then resyncs instead
# of trusting the log: a RAID5 with consistency-policy = ppl is killed
# with -9 right after FUA writes, a byte of the latest log's partial
# parity is flipped on the member holding it, and the restart names the
# member and entry, resyncs, reads back what was written, and a check
# finds no mismatch.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdsh

new_array pp 5 left-symmetric 64K 4 16M --assume-clean
sed -i '/^\[array\]/a consistency-policy = ppl' "$conf"
"$NBDRAID" create --force --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create: $(cat "$T/create.log")"
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy --flush "$T/data" "$uri"
fua_writes "$T/data" 3 30
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || :
server_pid=

# Flip a byte of the first partial parity in the latest log of the
# member whose log is longest (md's chain: headers while the
# generation grows; the area starts 8 KiB into the member).
victim=$(/usr/bin/python3 - $members <<'PY'
import struct, sys
AREA, SIZE, HDR = 8192, 1 << 20, 4096
best = None
for path in sys.argv[1:]:
    f = open(path, "r+b")
    off, last, gen = 0, None, -1
    while off + HDR <= SIZE:
        f.seek(AREA + off)
        h = f.read(HDR)
        g, n = struct.unpack_from("<QI", h, 520)
        if n > 148 or g < gen or g == 0:
            break
        sizes = [struct.unpack_from("<I", h, 536 + 24 * i + 8)[0] for i in range(n)]
        last, gen = (off, sizes), g
        off += HDR + sum(sizes)
    if last and any(last[1]) and (best is None or gen > best[0]):
        best = (gen, path, last)
if not best:
    sys.exit("no log with partial parity on any member")
gen, path, (off, sizes) = best
first = next(i for i, s in enumerate(sizes) if s)
at = AREA + off + HDR + sum(sizes[:first]) + 100
f = open(path, "r+b")
f.seek(at)
b = f.read(1)
f.seek(at)
f.write(bytes([b[0] ^ 0x5a]))
print(path, first, gen)
PY
) || die "could not find a log to corrupt: $victim"
read -r vpath ventry vgen <<< "$victim"

start_server "$conf"
grep -q "($vpath): PPL entry $ventry of generation $vgen .* bad checksum" \
  "$T/nbdkit.log" || die "the bad entry is not named: $(cat "$T/nbdkit.log")"
wait_status 120 "j['synced'] and j['job']['kind'] == 'idle'"
nbdcopy "$uri" "$T/back"
cmp "$T/data" "$T/back" || die "the data differs after the bad log"
"$NBDRAID" check "$conf" > /dev/null
wait_status 120 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "check: $(status_json)"
stop_server
echo "ok: a bad PPL entry is skipped by name, and the resync makes it good"
