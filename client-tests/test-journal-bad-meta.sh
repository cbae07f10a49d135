#!/usr/bin/env bash
# A write journal whose log holds a torn meta block (its checksum
# fails) after a crash: the replay writes the blocks before it, stops
# there and names it, and the new log starts at it, so the next start
# replays nothing of the old log.  A torn page instead: its block is
# dropped and named, and the replay reads on past it, as md does.  The
# array serves every byte.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

WALK="/usr/bin/python3 $abs_top_srcdir/client-tests/journal-walk.py"
dir=$T/j5
make_members "$dir" 4 8M
truncate -s 4M "$dir/journal.img"
# shellcheck disable=SC2046
write_config "$dir/a.conf" 5 left-symmetric 64K $(member_paths "$dir" 4)
conf=$dir/a.conf
array_option "consistency-policy = journal"
echo "journal = $dir/journal.img" >> "$conf"
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create: $(tail -1 "$T/create.log")"

start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"
stop_server
# ten_writes_and_crash: ten single-block writes, each its own meta
# block, then a crash: the log holds them past the tail.
ten_writes_and_crash () {
  start_server "$conf"
  # shellcheck disable=SC2016
  /usr/bin/python3 - "$uri" "$T/data" <<'PY'
import sys
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
with open(sys.argv[2], "rb") as f:
    for i in range(10):
        off = i * 3 * 65536 + 8192
        f.seek(off)
        h.pwrite(f.read(4096), off, nbd.CMD_FLAG_FUA)
PY
  crash_server
  $WALK list "$dir/journal.img" > "$T/walk"
  [ "$(wc -l < "$T/walk")" -ge 11 ] ||
    die "the crash left too short a log: $(cat "$T/walk")"
}

# The blocks' new data, in the model.
/usr/bin/python3 - "$T/data" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    for i in range(10):
        f.seek(i * 3 * 65536 + 8192)
        f.write(bytes([0x40 + i]) * 4096)
PY
ten_writes_and_crash
bad=$($WALK damage "$dir/journal.img" 4)

start_server "$conf"
grep -q "write journal replayed 3 meta blocks (3 stripe rows); the log ended at meta block at sector $bad: checksum" \
  "$T/nbdkit.log" || die "the replay did not stop at sector $bad: $(grep -i journal "$T/nbdkit.log")"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "the array lost data"
crash_server
: > "$T/nbdkit.log"
start_server "$conf"
grep -q "write journal replayed" "$T/nbdkit.log" &&
  die "the next start replayed the old log again: $(grep journal "$T/nbdkit.log")"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "the array lost data after a second start"
stop_server

# A torn page: its block dropped, named, the rest replayed.
ten_writes_and_crash
: > "$T/nbdkit.log"
bad=$($WALK damage-page "$dir/journal.img" 4)
start_server "$conf"
grep -q "write journal: 1 meta blocks dropped, their pages failing their checksums (md drops them too); the first: meta block at sector $bad (seq [0-9]*): payload 0 page 0 checksum" \
  "$T/nbdkit.log" || die "the torn page is not named: $(grep -i journal "$T/nbdkit.log")"
grep -q "write journal replayed 10 meta blocks (9 stripe rows)" "$T/nbdkit.log" ||
  die "the replay did not read past the torn page: $(grep -i journal "$T/nbdkit.log")"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "the array lost data (torn page)"
stop_server
echo "ok: a torn meta block at sector $bad ends the replay, named;" \
  "a torn page drops its block, named, and the replay reads on"
