#!/usr/bin/env bash
# The far side of a write-behind mirror goes away (its server killed)
# with writes still behind on it: they fail, the member is failed and
# the array serves on from the local copy, every answered write intact;
# their bitmap regions stay dirty, and when the far copy comes back,
# re-add rebuilds only those regions from the local copy.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

mkdir -p "$T/w"
truncate -s 32M "$T/w/d0.img" "$T/w/d1.img"
start_member far "$T/w/d1.img" --filter=delay -- wdelay=20ms
conf=$T/w/a.conf
write_config "$conf" 1 - - "$T/w/d0.img" "$member_uri write-mostly"
sed -i '/^\[array\]/a write-behind = 256\nbitmap-chunk = 64K\nnbd-timeout = 3' "$conf"
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create: $(cat "$T/create.log")"
start_server "$conf"
member_bytes=$(status_json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["member_bytes"])')
random_file "$T/data" "$(export_size)"
nbdcopy --flush "$T/data" "$uri"
# The copy dirtied every region: let the bitmap clear them.
wait_status 30 "j['bitmap']['dirty'] == 0"

# 200 writes of 4K answered, then the far side is gone before most of
# them reached it.
/usr/bin/python3 - "$uri" "$T/data" <<'PY' || die "burst failed"
import os, sys
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
with open(sys.argv[2], "r+b") as f:
    for i in range(200):
        off = 16 * 1024 * 1024 + i * 4096
        buf = os.urandom(4096)
        h.pwrite(buf, off)
        f.seek(off)
        f.write(buf)
PY
kill_member far
wait_status 30 "j['devices'][1]['state'] == 'faulty'"
nbdcopy "$uri" "$T/back" && cmp "$T/data" "$T/back" ||
  die "an answered write was lost with the far copy"
status_is "j['bitmap']['dirty'] > 0" || die "no region dirty: $(status_json)"
echo "ok: the far copy failed with writes behind; the local copy has them all"

start_member far "$T/w/d1.img"
"$NBDRAID" re-add "$conf" "$member_uri" > /dev/null || die "re-add refused"
wait_status 60 "j['working'] == 2 and j['job']['kind'] == 'idle'"
rebuilt=$(last_work_bytes)
[ "$rebuilt" -gt 0 ] && [ "$rebuilt" -lt $((member_bytes / 8)) ] ||
  die "re-add rebuilt $rebuilt of $member_bytes bytes"
nbdcopy "$uri" "$T/back" && cmp "$T/data" "$T/back" || die "read back differs"
stop_server
off=$((2048 * 512)) size=$(stat -c %s "$T/data")
cmp -n "$size" -i "$off:$off" "$T/w/d0.img" "$T/w/d1.img" ||
  die "the copies differ after the re-add"
echo "ok: re-add rebuilt $rebuilt of $member_bytes bytes, the regions written behind"
