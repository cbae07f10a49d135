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
. "$abs_top_srcdir/client-tests/lib/reshape-faults.sh"
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
goes_on_degraded 6 "doubly degraded"
echo "ok: members 1 and 3 failed, the reshape goes on doubly degraded"

killed_and_resumed
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
