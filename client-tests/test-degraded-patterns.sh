#!/usr/bin/env bash
# Every failure pattern each redundant level tolerates: with those
# members gone the array starts (degraded=true), reads back what was
# written before, takes random writes, zeroes and trims while degraded,
# and after a restart serves the new data, even when the stale members
# come back (the superblocks record them as faulty).
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

RANDOM_IO="/usr/bin/python3 $abs_top_srcdir/client-tests/random-io.py"
patterns=0

# degrade NAME N "FAILED MEMBERS": one pattern on a copy of $T/NAME
degrade () {
  local name=$1 n=$2 failed=$3 p=$T/pattern i
  rm -rf "$p"
  cp -r --sparse=always "$T/$name" "$p"
  sed "s|$T/$name/|$p/|" "$T/$name/a.conf" > "$p/a.conf"
  for i in $failed; do rm "$p/d$i.img"; done
  conf=$p/a.conf
  start_server "$conf" degraded=true
  nbdcopy "$uri" "$T/out"
  cmp "$T/$name.data" "$T/out" || die "$name without $failed: reads differ"
  $RANDOM_IO "$uri" 60 "$patterns" --expect "$T/$name.data" \
    --save "$T/expect" > /dev/null || die "$name without $failed: random I/O"
  stop_server
  # The failure is on record: no degraded=true needed, and the stale
  # members, back in place, are not read.
  for i in $failed; do cp --sparse=always "$T/$name/d$i.img" "$p/"; done
  start_server "$conf"
  nbdcopy "$uri" "$T/out"
  cmp "$T/expect" "$T/out" || die "$name without $failed: lost degraded writes"
  stop_server
  patterns=$((patterns + 1))
}

# prepare NAME LEVEL LAYOUT CHUNK N: a healthy array holding random data
prepare () {
  local name=$1
  new_array "$@" 3M
  start_server "$conf"
  random_file "$T/$name.data" "$(export_size)"
  nbdcopy "$T/$name.data" "$uri"
  stop_server
}

# Each member alone, then (with two) every pair.
singles_and_pairs () {
  local name=$1 n=$2 pairs=$3 i j
  for ((i = 0; i < n; i++)); do degrade "$name" "$n" "$i"; done
  [ "$pairs" = pairs ] || return 0
  for ((i = 0; i < n; i++)); do
    for ((j = i + 1; j < n; j++)); do degrade "$name" "$n" "$i $j"; done
  done
}

for layout in left-asymmetric right-asymmetric left-symmetric right-symmetric
do
  prepare "r5-$layout" 5 "$layout" 16K 4
  singles_and_pairs "r5-$layout" 4 no
  prepare "r6-$layout" 6 "$layout" 16K 5
  singles_and_pairs "r6-$layout" 5 pairs
done
prepare r1 1 - - 3
singles_and_pairs r1 3 pairs
# RAID10: every single member, and the pairs that keep a copy of
# everything (n2 on 4: copies on 0+1 and 2+3; f2/o2 on 4: d and d+1).
for layout in n2 f2 o2; do
  prepare "r10-$layout" 10 "$layout" 16K 4
  singles_and_pairs "r10-$layout" 4 no
done
degrade r10-n2 4 "0 2"
degrade r10-n2 4 "1 3"
degrade r10-n2 4 "0 3"
degrade r10-f2 4 "0 2"
degrade r10-o2 4 "1 3"
prepare r10-n3 10 n3 16K 3
singles_and_pairs r10-n3 3 pairs
echo "ok: $patterns failure patterns survived"
