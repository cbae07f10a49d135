#!/usr/bin/env bash
# write-behind = N, md's --write-behind: a RAID1 of a local file and a
# write-mostly NBD member 20 ms away (nbdkit's delay filter) answers a
# 4K write as soon as the local copy has it, not after the far one; the
# data reads back; a flush waits for the far copy, after which both
# members' data areas are the same; the limit is in the bitmap header
# (offset 60), as mdadm --write-behind puts it, and a new limit in the
# config gets there at the next start.  Overlapping writes reach the far
# copy in the order they were made.
# Beyond the limit a writer waits.  When the local copy fails with writes still behind, reads from the far
# copy wait for them.
. "$(dirname "$0")/lib.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

FAR_DELAY_MS=20
mkdir -p "$T/w"
truncate -s 32M "$T/w/d0.img" "$T/w/d1.img"
start_member far "$T/w/d1.img" --filter=delay -- wdelay=${FAR_DELAY_MS}ms
conf=$T/w/a.conf
write_config "$conf" 1 - - "$T/w/d0.img" "$member_uri write-mostly"
sed -i '/^\[array\]/a write-behind = 256\nbitmap-chunk = 1M' "$conf"
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create: $(cat "$T/create.log")"
# header_limit_is N: both members' bitmap headers say write_behind N
header_limit_is () {
  local f wb
  for f in d0 d1; do
    wb=$(od -An -tu4 -j $((8192 + 60)) -N4 "$T/w/$f.img" | tr -d ' ')
    [ "$wb" = "$1" ] || die "$f: bitmap write_behind is $wb, not $1"
  done
}
header_limit_is 256
grep -q "Write Mode : Allow write behind, max 256" <<< "$("$NBDRAID" examine "$member_uri")" ||
  die "examine: $("$NBDRAID" examine "$member_uri")"

start_server "$conf"
# 400 writes of 4K, one at a time, each timed; then a flush, timed.
# Prints the median write and the flush in ms.
/usr/bin/python3 - "$uri" "$T/data" > "$T/times" <<'PY' || die "writer failed"
import os, sys, time
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
size = h.get_size()
data = bytearray(size)
took = []
for i in range(400):
    buf = os.urandom(4096)
    off = (i * 7919 % (size // 4096)) * 4096
    t = time.monotonic()
    h.pwrite(buf, off)
    took.append(time.monotonic() - t)
    data[off:off + 4096] = buf
t = time.monotonic()
h.flush()
flush = time.monotonic() - t
open(sys.argv[2], "wb").write(data)
took.sort()
print("%.3f %.3f" % (took[len(took) // 2] * 1000, flush * 1000))
PY
read -r median flush < "$T/times"
echo "median 4K write ${median} ms, then flush ${flush} ms (far copy ${FAR_DELAY_MS} ms)"
# The mechanism, not a number: a write that waited for the far copy
# would take at least its delay.
/usr/bin/python3 -c "import sys; sys.exit(not float('$median') < $FAR_DELAY_MS / 4)" ||
  die "median write took $median ms: it waited for the far copy"

nbdcopy "$uri" "$T/back" && cmp "$T/data" "$T/back" || die "read back differs"

# 200 writes over the same four blocks, each 8K straddling the next,
# answered one after the other while many are still behind: after a
# flush the far copy holds the last.
/usr/bin/python3 - "$uri" "$T/data" <<'PY' || die "overlapping writer failed"
import os, sys
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
with open(sys.argv[2], "r+b") as f:
    for i in range(200):
        off = (i % 4) * 4096
        buf = os.urandom(8192)
        h.pwrite(buf, off)
        f.seek(off)
        f.write(buf)
h.flush()
PY
# Flushed: both data areas (at 2048 sectors) hold the same bytes, now
# and once the server is gone.
off=$((2048 * 512)) size=$(stat -c %s "$T/data")
cmp -n "$size" -i "$off:0" "$T/w/d1.img" "$T/data" ||
  die "the far copy lacks flushed writes"
stop_server
cmp -n "$size" -i "$off:$off" "$T/w/d0.img" "$T/w/d1.img" ||
  die "the copies differ after a clean stop"
echo "ok: write-behind answers at the local copy's speed; flush waits for the far one"

# At most 4 behind: 100 writes cannot take less than 96 / 4 far delays;
# a write bigger than the limit (a MiB counts one) still goes.
sed -i 's/^write-behind = 256$/write-behind = 4/' "$conf"
start_server "$conf"
header_limit_is 4
/usr/bin/python3 - "$uri" "$T/data" > "$T/total" <<'PY' || die "writer failed"
import os, sys, time
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
bufs = [os.urandom(4096) for i in range(100)]
t = time.monotonic()
for i in range(100):
    h.pwrite(bufs[i], i * 4096)
took = time.monotonic() - t
# 6 MiB in one write: more than the limit's 4 MiB, it goes alone.
big = os.urandom(6 << 20)
h.pwrite(big, 1 << 20)
with open(sys.argv[2], "r+b") as f:
    f.write(b"".join(bufs))
    f.seek(1 << 20)
    f.write(big)
print("%.0f" % (took * 1000))
PY
total=$(cat "$T/total")
echo "write-behind = 4: 100 writes took $total ms"
[ "$total" -ge $((96 / 4 * FAR_DELAY_MS)) ] ||
  die "100 writes took $total ms: more than 4 were behind at once"
stop_server
echo "ok: the limit follows the config into the bitmap header and holds"

# 300 writes answered, not flushed, then the local copy fails: the far
# copy alone serves reads, each after the writes behind over it.
start_server "$conf"
/usr/bin/python3 - "$uri" "$T/data" <<'PY' || die "burst failed"
import os, sys
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
with open(sys.argv[2], "r+b") as f:
    for i in range(300):
        off = i * 3 * 4096
        buf = os.urandom(4096)
        h.pwrite(buf, off)
        f.seek(off)
        f.write(buf)
PY
"$NBDRAID" fail "$conf" 0 --force > /dev/null || die "fail refused"
nbdcopy "$uri" "$T/back" && cmp "$T/data" "$T/back" ||
  die "the far copy alone read back wrong: a read passed a write behind"
stop_server
echo "ok: with the local copy failed, reads from the far copy wait for the writes behind"
