#!/usr/bin/env bash
# The write-intent bitmap after kill -9: only the regions near the
# writes in flight are dirty, so the resync covers a small part of the
# array (< 10% for writes confined to its first MiB), check finds no
# mismatch, and mdadm --examine-bitmap (on a loop device over a member)
# agrees with nbdraid examine about the bitmap.  A clean stop (SIGTERM)
# leaves the array clean: no resync at the next start.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh

new_array r5 5 left-symmetric 64K 4 34M --assume-clean
echo "bitmap-chunk = 64K" > "$T/bm"
sed -i "/^\[array\]/r $T/bm" "$conf"
"$NBDRAID" create --force --assume-clean "$conf" 2>> "$T/create.log"

start_server "$conf"
member_bytes=$(status_json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["member_bytes"])')
# Writes confined to the first MiB; the server dies in the middle.
nbdsh -u "$uri" -c "
import os, random, signal
r = random.Random(1)
cookies = []
for i in range(400):
    off = r.randrange(0, 1048576 - 8192)
    cookies.append(h.aio_pwrite(r.randbytes(8192), off))
    if i == 300:
        # Some writes done (array dirty, bits set), the rest in flight.
        while h.aio_in_flight() > 200:
            h.poll(-1)
        os.kill($server_pid, signal.SIGKILL)
        break
" 2> /dev/null || :
wait "$server_pid" 2>/dev/null || :
server_pid=

# The bitmap as mdadm reads it, and as nbdraid examine does.
if [ "$(id -u)" = 0 ] && command -v mdadm > /dev/null &&
   loop=$(losetup -f --show -r "$T/r5/d0.img" 2>/dev/null); then
  mdadm --examine-bitmap "$loop" > "$T/mdadm-x" 2>&1
  losetup -d "$loop"
  "$NBDRAID" examine --json "$T/r5/d0.img" > "$T/examine.json"
  /usr/bin/python3 - "$T/mdadm-x" "$T/examine.json" <<'PY' || die "mdadm and nbdraid disagree: $(cat "$T/mdadm-x")"
import json, re, sys
x = open(sys.argv[1]).read()
b = json.load(open(sys.argv[2]))[0]["bitmap"]
chunk = re.search(r"Chunksize : (\d+) KB", x).group(1)
events = re.search(r"\n\s+Events : (\d+)", x).group(1)
bits, dirty = re.search(r"Bitmap : (\d+) bits \(chunks\), (\d+) dirty", x).groups()
assert int(chunk) * 1024 == b["chunk_bytes"], (chunk, b)
assert int(events) == b["events"], (events, b)
assert int(bits) == b["chunks"] and int(dirty) == b["dirty"], (bits, dirty, b)
assert 0 < b["dirty"] < b["chunks"] // 10, b
print("ok: mdadm -X and nbdraid examine agree:", b)
PY
fi

start_server "$conf"
wait_status 60 "j['synced'] and j['job']['kind'] == 'idle'"
resynced=$(last_work_bytes)
[ "$resynced" -gt 0 ] || die "no resync after the crash"
[ "$resynced" -lt $((member_bytes / 10)) ] ||
  die "resync covered $resynced of $member_bytes bytes per member"
"$NBDRAID" check "$conf" > /dev/null
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the resync"
echo "ok: the resync after kill -9 covered $resynced of $member_bytes bytes"

# A clean stop: clean superblocks, no dirty bit, no resync next time.
stop_server
grep -q "State : clean" <<< "$("$NBDRAID" examine "$T/r5/d1.img")" || die "not clean after SIGTERM"
grep -q '"dirty": 0}' <<< "$("$NBDRAID" examine --json "$T/r5/d1.img")" || die "dirty bits after SIGTERM"
start_server "$conf"
status_is "j['synced'] and j['job']['kind'] == 'idle' and j['last_work_bytes'] == 0" ||
  die "a resync after a clean stop: $(status_json)"
stop_server
grep -c "resync finished" "$T/nbdkit.log" | grep -qx 1 || die "more than one resync ran"
echo "ok: SIGTERM leaves the array clean: no resync at the next start"
