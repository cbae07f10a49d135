#!/usr/bin/env bash
# nbdraid readonly / readwrite, as mdadm --readonly / --readwrite, on a
# served array: a connection made before keeps its handle but its
# writes fail, new connections are offered read-only, the array is
# marked clean and its members are not written at all (a repair in
# progress pauses); readwrite undoes it all.  An array assembled with
# readonly=true cannot be made writable from here.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh

new_array r5 5 left-symmetric 64K 3 64M --assume-clean
start_server "$conf"
random_file "$T/data" 16M
nbdcopy "$T/data" "$uri"
"$NBDRAID" speed-limit "$conf" 1 1 > /dev/null
"$NBDRAID" repair "$conf" > /dev/null
wait_status 10 "j['job']['kind'] == 'repair' and j['job']['done_bytes'] > 0"

# One client writes, then waits on a fifo while the admin acts.
mkfifo "$T/go"
nbdsh -u "$uri" -c "
h.pwrite(b'z' * 4096, 0)
h.flush()
open('$T/written', 'w').close()
open('$T/go').read()
try:
    h.pwrite(b'x' * 4096, 0)
    print('write passed')
except nbd.Error as e:
    print('write refused:', e.errno)
" > "$T/client.out" 2>&1 &
client=$!
cleanup_fn "kill $client 2>/dev/null"
wait_for 10 test -e "$T/written" || die "the client did not write"
out=$("$NBDRAID" readonly "$conf") || die "readonly: $out"
[ "$out" = "array test is read-only" ] || die "readonly said: $out"
timeout 10 sh -c "echo go > '$T/go'" || die "the client is gone"
wait "$client"
dd if=/dev/zero bs=4096 count=1 2>/dev/null | tr '\0' z |
  dd of="$T/data" conv=notrunc 2>/dev/null
grep -q "write refused: EPERM\|write refused: EROFS" "$T/client.out" ||
  die "the older connection could write: $(cat "$T/client.out")"
status_is "j['readonly'] and j['clean'] and 'read-only' in j['state'] and j['bitmap']['dirty'] == 0" ||
  die "status after readonly: $(status_json)"
grep -q "State : clean, read-only" <<< "$("$NBDRAID" detail "$conf")" ||
  die "detail: $("$NBDRAID" detail "$conf")"
grep -q "State : clean" <<< "$("$NBDRAID" examine "$T/r5/d0.img")" ||
  die "superblock not clean: $("$NBDRAID" examine "$T/r5/d0.img")"

# Nothing reaches a member: not the paused repair, not the bitmap, not
# a superblock, whatever clients read.
done_at=$(status_json | python3 -c 'import json,sys; print(json.load(sys.stdin)["job"]["done_bytes"])')
sums=$(md5sum $members)
[ "$(nbdinfo --can write "$uri"; echo $?)" = 2 ] ||
  die "a new connection is offered writes"
nbdcopy "$uri" "$T/back" && cmp -n 16M "$T/data" "$T/back" ||
  die "read back differs"
sleep 2.5       # past safemode and a few job steps
[ "$sums" = "$(md5sum $members)" ] || die "a read-only array wrote a member"
status_is "j['job']['kind'] == 'repair' and j['job']['done_bytes'] == $done_at" ||
  die "the repair moved while read-only: $(status_json)"
truncate -s 64M "$T/spare.img"
if out=$("$NBDRAID" add "$conf" "$T/spare.img" 2>&1); then
  die "add passed read-only"
fi
grep -q "array test is read-only" <<< "$out" || die "add: $out"

out=$("$NBDRAID" readwrite "$conf") || die "readwrite: $out"
[ "$out" = "array test is writable" ] || die "readwrite said: $out"
nbdinfo --can write "$uri" || die "not writable after readwrite"
nbdsh -u "$uri" -c "
h.pwrite(b'y' * 4096, 8192)
assert h.pread(4096, 8192) == b'y' * 4096" || die "write after readwrite"
"$NBDRAID" speed-limit "$conf" 0 0 > /dev/null
"$NBDRAID" wait "$conf"
status_is "not j['readonly'] and j['synced']" || die "after: $(status_json)"
stop_server
$MODEL check $members > "$T/check.out" || die "parity: $(cat "$T/check.out")"

# Assembled read-only: writable only by serving it again.
start_server "$conf" readonly=true
if out=$("$NBDRAID" readwrite "$conf" 2>&1); then die "readwrite passed"; fi
grep -q "array test was assembled read-only (readonly=true or nbdkit -r)" \
  <<< "$out" || die "readwrite said: $out"
echo "ok: readonly drains, marks clean, writes nothing; readwrite resumes"
