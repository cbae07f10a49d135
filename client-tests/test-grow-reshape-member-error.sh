#!/usr/bin/env bash
# A member whose writes start failing in the middle of a RAID5 reshape
# (nbdkit's error filter with a trigger file) is failed, as md fails
# it, and the reshape goes on degraded, as md's does: every byte still
# reads back while it runs.  kill -9 of the server then, and the
# restarted array (one member faulty, dirty: start-dirty-degraded=true,
# as md's start_dirty_degraded) resumes the degraded reshape
# where its superblocks say and ends it; the second spare is then
# rebuilt into the empty role in the new geometry, a check is clean
# and the members match md's layout for 5 members.
. "$(dirname "$0")/lib.sh"
. "$abs_top_srcdir/client-tests/lib/reshape-faults.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

create_opts=(--assume-clean)
nbd_spares=2 nbd_array r5 5 left-symmetric 64K 4 16M
kill_member r5-2
start_member r5-2 "$T/r5/d2.img" --filter=error -- error=EIO \
  error-pwrite-rate=100% error-file="$T/trigger"
printf 'speed-min = 1M\nspeed-max = 1M\n' > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"
rm -f "$T/trigger"
start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"
"$NBDRAID" grow "$conf" --raid-devices 5 > /dev/null || die "grow refused"
wait_status 30 "j['job']['kind'] == 'reshape' and j['job']['done_bytes'] >= 2 * 1048576" ||
  die "the reshape did not start: $(status_json)"
touch "$T/trigger"
wait_for 30 grep -q "member 2 (nbd+unix:///?socket=$T/r5-2.sock) failed" "$T/nbdkit.log" ||
  die "member 2 was not failed: $(tail -5 "$T/nbdkit.log")"
goes_on_degraded 5 degraded
echo "ok: member 2 failed, the reshape goes on degraded, the data is served"

killed_and_resumed
wait_status 60 "j['job']['kind'] == 'idle' and j['working'] == 5" ||
  die "the spare was not rebuilt after the reshape: $(status_json)"
grep -q "reshape finished: 5 members" "$T/nbdkit.log" || die "no reshape finished"
[ "$(export_size)" = $((size / 3 * 4)) ] || die "the array is $(export_size) bytes"
truncate -s $((size / 3 * 4)) "$T/data"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "the data differs after the degraded reshape"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the reshape: $(status_json)"
stop_server
roles=$(for i in 0 1 2 3 4 5; do
  f=$T/r5/d$i.img; [ "$i" -ge 4 ] && f=$T/r5/s$((i - 4)).img
  [ "$i" = 2 ] && continue
  echo "$f"
done)
members=$(echo $roles)
check_members_hold "$T/data"
echo "ok: restarted after kill -9, the degraded reshape ended, the spare rebuilt"
