#!/usr/bin/env bash
# Two members whose writes start failing one after the other in the
# middle of a RAID6 reshape from 4 to 5 members (nbdkit's error filter
# with trigger files) are failed, as md fails them, and the reshape goes
# on doubly degraded, as md's does: every byte still reads back and
# writes land while it runs.  kill -9 of the server then, and the
# restarted array (two members faulty, dirty: start-dirty-degraded=true)
# resumes the reshape where its superblocks say and ends it; the two
# remaining spares are then rebuilt into the empty roles in the new
# geometry, a check is clean and the members match md's layout for 5
# members (each device's role read back with mdadm --examine).
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires mdadm

create_opts=(--assume-clean)
nbd_spares=3 nbd_array r6 6 left-symmetric 64K 4 16M
for i in 1 3; do
  kill_member r6-$i
  start_member r6-$i "$T/r6/d$i.img" --filter=error -- error=EIO \
    error-pwrite-rate=100% error-file="$T/trigger$i"
done
array_option "speed-min = 1M" "speed-max = 1M"
rm -f "$T/trigger1" "$T/trigger3"
start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"
"$NBDRAID" grow "$conf" --raid-devices 5 > /dev/null || die "grow refused"
for i in 1 3; do
  wait_status 30 "j['job']['kind'] == 'reshape' and j['job']['done_bytes'] >= ($i + 1) * 1048576" ||
    die "the reshape does not go on: $(status_json)"
  touch "$T/trigger$i"
  wait_for 30 grep -q "member $i (nbd+unix:///?socket=$T/r6-$i.sock) failed" "$T/nbdkit.log" ||
    die "member $i was not failed: $(tail -5 "$T/nbdkit.log")"
done
wait_status 30 "j['job']['kind'] == 'reshape' and j['job']['done_bytes'] >= 6 * 1048576" ||
  die "the reshape does not go on doubly degraded: $(status_json) $(tail -3 "$T/nbdkit.log")"
nbdcopy "$uri" "$T/out" || die "reads fail in the doubly degraded reshape"
cmp "$T/data" "$T/out" || die "the data differs in the doubly degraded reshape"
# New data over the first half, in flight across the kill.
head -c $((size / 2)) /dev/urandom > "$T/half"
nbdcopy --flush "$T/half" "$uri" || die "writes fail in the doubly degraded reshape"
dd if="$T/half" of="$T/data" conv=notrunc status=none
echo "ok: members 1 and 3 failed, the reshape goes on doubly degraded"

kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || :
server_pid=
start_server "$conf" start-dirty-degraded=true
grep -q "reshape from 4 to 5 members resumes at new stripe [1-9]" "$T/nbdkit.log" ||
  die "the reshape did not resume: $(grep -i reshape "$T/nbdkit.log" | tail -3)"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "the data differs after the kill"
# The reshape is held at 1M/s until here: had it ended before the
# compare above, the client would have seen the grown array.
"$NBDRAID" speed-limit "$conf" 0 0 > /dev/null
"$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
grep -q "reshape finished: 5 members" "$T/nbdkit.log" || die "no reshape finished"
wait_status 120 "j['job']['kind'] == 'idle' and j['working'] == 5" ||
  die "the spares were not rebuilt after the reshape: $(status_json)"
[ "$(export_size)" = $((size / 2 * 3)) ] || die "the array is $(export_size) bytes"
truncate -s $((size / 2 * 3)) "$T/data"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "the data differs after the degraded reshape"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the reshape: $(status_json)"
stop_server
declare -A role_of
for f in "$T"/r6/d0.img "$T"/r6/d2.img "$T"/r6/s*.img; do
  r=$(mdadm --examine "$f" 2>/dev/null | sed -n 's/ *Device Role : Active device \([0-9]*\)/\1/p')
  [ -n "$r" ] && role_of[$r]=$f
done
members=$(for i in 0 1 2 3 4; do echo "${role_of[$i]:?no device holds role $i}"; done)
members=$(echo $members)
check_members_hold "$T/data"
echo "ok: restarted after kill -9, the doubly degraded reshape ended, the spares rebuilt"
