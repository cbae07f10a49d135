#!/usr/bin/env bash
# A nested array's extents: an outer chunk much larger than the inner
# arrays' (32M over groups of 4K chunks, 8192 inner units) is asked of
# the inner array whole, which answers at most 4096 units a call.  Data
# past them must still be data: nbdinfo --map shows it, and nbdcopy,
# which skips holes, copies it.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh
requires nbdinfo
requires nbdcopy

d=$T/n
mkdir -p "$d"
{
  printf '[array]\nname = top\nsocket = %s\nlevel = 0\nchunk = 32M\n' \
    "$d/top.sock"
  printf '[members]\nmember = array:g0\nmember = array:g1\n'
  for g in 0 1; do
    printf '[array g%s]\nlevel = 5\nchunk = 4K\n[members g%s]\n' "$g" "$g"
    for i in 0 1 2; do
      truncate -s 100M "$d/g$g-d$i.img"
      echo "member = g$g-d$i.img"
    done
  done
} > "$d/a.conf"
conf=$d/a.conf
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create failed: $(tail -1 "$T/create.log")"
start_server "$conf"

# 64K of data 30M into the array: outer chunk 0, so group g0, 30M into
# it, past the first 4096 of its 4K units.
at=$((30 * 1024 * 1024))
head -c 65536 /dev/urandom > "$T/data"
nbdsh -u "$uri" -c "
h.pwrite(open('$T/data', 'rb').read(), $at)
h.flush()"

nbdinfo --map "$uri" > "$T/map"
/usr/bin/python3 - "$T/map" "$at" <<'PY' || die "the map calls the data a hole: $(cat "$T/map")"
import sys
at = int(sys.argv[2])
for line in open(sys.argv[1]):
    off, length, kind = (int(x) for x in line.split()[:3])
    if off <= at < off + length:
        sys.exit(1 if kind & 1 else 0)      # bit 0: hole
sys.exit(1)
PY
nbdcopy "$uri" "$T/out"
cmp <(dd if="$T/out" bs=64K skip=$((at / 65536)) count=1 status=none) \
  "$T/data" || die "nbdcopy copied zeros where the data is"
stop_server
echo "ok: a nested array's data past 4096 inner units is data"
