#!/usr/bin/env bash
# Zero and trim read back as zeros and keep parity right; whole stripes
# are deallocated on every member (parity included) and show up as
# holes in nbdinfo --map.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh
requires nbdinfo

# RAID6, 6 members, 64K chunks: a stripe holds 256K of data.
new_array r6 6 left-symmetric 64K 6 8M
start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy "$T/data" "$uri"
nbdsh -u "$uri" -c '
stripe = 256 * 1024
h.zero(4 * stripe, 8 * stripe)        # whole stripes 8..11
h.trim(2 * stripe, 20 * stripe)       # whole stripes 20..21
h.zero(3000, 100000)                  # partial, unaligned
h.trim(5000, 30 * stripe + 777)       # partial, unaligned
h.flush()
'
/usr/bin/python3 - "$T/data" <<'PY'
import sys
stripe = 256 * 1024
d = bytearray(open(sys.argv[1], "rb").read())
for off, n in ((8 * stripe, 4 * stripe), (20 * stripe, 2 * stripe),
               (100000, 3000), (30 * stripe + 777, 5000)):
    d[off:off + n] = bytes(n)
open(sys.argv[1], "wb").write(d)
PY
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "zeroed ranges read back wrong"
nbdinfo --map "$uri" > "$T/map"
grep -Eq "^ *$((8 * 262144)) +$((4 * 262144)) +3 +hole,zero" "$T/map" ||
  die "stripes 8..11 not reported as a hole: $(cat "$T/map")"
stop_server
check_members_hold "$T/data"
# Each member's chunks of stripes 8..11 are deallocated (parity too).
for i in 0 1 2 3 4 5; do
  /usr/bin/python3 - "$T/r6/d$i.img" <<'PY' || die "member $i not deallocated"
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
start = 1024 * 1024 + 8 * 65536           # data offset + stripe 8
nxt = os.lseek(fd, start, os.SEEK_DATA)
sys.exit(0 if nxt >= start + 4 * 65536 else 1)
PY
done
echo "ok: zero and trim"
