#!/usr/bin/env bash
# kill -9 of the server again and again through a RAID5 reshape from 4
# to 5 members (or, with RESHAPE_GROW="--chunk 128K", from a 64K to a
# 128K chunk: test-grow-reshape-chunk-crash-loop.sh), each time with crash-writer.py's writes in flight (the
# kill comes right after the next writes are sent): from the first
# windows, bounded by the room the data offsets moved back, to the
# end.  After each restart every write crash-writer had acknowledged as
# durable reads back; at the end the reshape is done, every slot holds
# its old bytes or bytes one of the writers sent, a check is clean and
# the members match md's layout for 5 members.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
python3 -c 'import nbd' 2>/dev/null || skip "python3 nbd module missing"
WRITER="/usr/bin/python3 $abs_top_srcdir/client-tests/crash-writer.py"

grow=${RESHAPE_GROW:---raid-devices 5}
n=4
[ "${grow%% *}" = --raid-devices ] && n=5
new_array r5 5 left-symmetric 64K 4 16M --assume-clean
dir=$T/r5
# heartbeat: each restart waits five of the killed server's beats.
printf 'speed-min = 4M\nspeed-max = 4M\nheartbeat = 100ms\n' > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"
start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"
if [ $n = 5 ]; then
  truncate -s 16M "$dir/d4.img"
  "$NBDRAID" add "$conf" "$dir/d4.img" > /dev/null || die "add refused"
fi
# shellcheck disable=SC2086
"$NBDRAID" grow "$conf" $grow > /dev/null || die "grow $grow refused"

kills=0 seeds=""
while ! grep -q "reshape finished" "$T/nbdkit.log" && [ $kills -lt 60 ]; do
  seed=$((kills + 1))
  seeds="$seeds $seed"
  $WRITER write "$uri" "$T/ledger" "$seed" 100000 $((10 + RANDOM % 40)) "$server_pid" ||
    die "crash-writer failed"
  wait "$server_pid" 2>/dev/null || :
  server_pid=
  kills=$((kills + 1))
  start_server "$conf"
  $WRITER verify "$uri" "$T/ledger" > /dev/null || die "durable writes lost at kill $kills"
  # The size changes a moment before the log says the reshape finished.
  [ "$(export_size)" = "$size" ] ||
    wait_for 10 grep -q "reshape finished" "$T/nbdkit.log" ||
    die "mid-reshape the array is $(export_size) bytes"
done
resumes=$(grep -c "resumes at new stripe" "$T/nbdkit.log")
echo "ok: $kills kills, $resumes resumes: $(grep -o 'resumes at new stripe [0-9]*' "$T/nbdkit.log" | grep -o '[0-9]*$' | tr '\n' ' ')"
[ "$resumes" -ge 3 ] || die "too few kills landed mid-reshape ($resumes)"
"$NBDRAID" speed-limit "$conf" 0 0 > /dev/null
"$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
wait_status 60 "j['job']['kind'] == 'idle' and j['working'] == $n"
new=$(export_size)
grown=$size
[ $n = 5 ] && grown=$((size / 3 * 4))
[ "$new" = "$grown" ] || die "the array is $new bytes, not $grown"
nbdcopy "$uri" "$T/out"
python3 - "$T/data" "$T/out" "$T/ledger" "$abs_top_srcdir/client-tests" $seeds <<'EOF2' || die "data wrong after the crashes"
import sys
old, out = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
durable = {}
for l in open(sys.argv[3]):
    seed, i = map(int, l.split())
    durable[i] = seed
seeds = [int(s) for s in sys.argv[5:]]
src = open(sys.argv[4] + "/crash-writer.py").read().split('\nif sys.argv[1] == "write":')[0]
cw = {}
exec(src, cw)
SLOT = cw["SLOT"]
# The new space starts as zeros (md's reshape writes it so); a writer
# that connected as the reshape finished saw the new size and may have
# written there too.
grown = len(out) - len(old)
old += bytes(grown)
n = len(out) // SLOT
torn = 0
for i in range(n):
    got, was = out[i * SLOT:(i + 1) * SLOT], old[i * SLOT:(i + 1) * SLOT]
    if i in durable:
        if got != cw["content"](durable[i], i):
            sys.exit("slot %d lost its durable write (seed %d)" % (i, durable[i]))
    elif got != was and all(got != cw["content"](s, i) for s in seeds):
        # A write cut short by the kill may have landed in part: each
        # byte is then the old one or a writer's.
        news = [cw["content"](s, i) for s in seeds]
        for j in range(SLOT):
            if got[j] != was[j] and all(got[j] != c[j] for c in news):
                sys.exit("slot %d byte %d (%s) holds neither its old byte "
                         "nor a writer's" % (i, j, "new space"
                         if i * SLOT + j >= len(out) - grown else "old data"))
        torn += 1
if out[n * SLOT:] != old[n * SLOT:]:
    sys.exit("the bytes past the last slot changed")
print("ok: %d slots checked, %d durable writes kept (%d in the new space), "
      "%d writes cut short"
      % (n, len(durable),
         sum(i * SLOT >= len(out) - grown for i in durable), torn))
EOF2
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the reshape: $(status_json)"
stop_server
members=$(member_paths "$dir" $n)
check_members_hold "$T/out"
rm -f "$T/data" "$T/out" "$T/model.img"
echo "ok: the reshape survived $kills kills with writes in flight"
