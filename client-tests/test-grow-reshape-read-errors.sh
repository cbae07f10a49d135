#!/usr/bin/env bash
# A member whose reads start failing now and then (nbdkit's error filter
# at 10% of reads, with a trigger file) in the middle of a RAID6
# reshape from 4 to 5 members: the chunks it does not give are computed
# from the rest of their stripes, for the reshape's windows and the
# clients' reads alike, and the reshape runs to its end with the member
# still in the array.  Every byte reads back throughout, a check is
# clean and the members match md's layout for 5 members.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

create_opts=(--assume-clean)
nbd_spares=1 nbd_array r6 6 left-symmetric 64K 4 16M
kill_member r6-2
start_member r6-2 "$T/r6/d2.img" --filter=error -- error=EIO \
  error-pread-rate=10% error-file="$T/trigger"
array_option "speed-min = 2M" "speed-max = 2M"
rm -f "$T/trigger"
start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"
"$NBDRAID" grow "$conf" --raid-devices 5 > /dev/null || die "grow refused"
wait_status 30 "j['job']['kind'] == 'reshape' and j['job']['done_bytes'] >= 2 * 1048576" ||
  die "the reshape did not start: $(status_json)"
touch "$T/trigger"
nbdcopy "$uri" "$T/out" || die "reads fail while a member's reads do"
cmp "$T/data" "$T/out" || die "the data differs while a member's reads fail"
"$NBDRAID" speed-limit "$conf" 0 0 > /dev/null
"$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
grep -q "reshape finished: 5 members" "$T/nbdkit.log" ||
  die "the reshape did not finish: $(grep -i reshape "$T/nbdkit.log" | tail -3)"
grep -q "member 2 (.*): read at [0-9]*: .*computed from the rest of its stripe" "$T/nbdkit.log" ||
  die "no read error was computed around: $(tail -5 "$T/nbdkit.log")"
rm -f "$T/trigger"
status_is "j['working'] == 5" || die "a member was failed: $(status_json)"
[ "$(export_size)" = $((size / 2 * 3)) ] || die "the array is $(export_size) bytes"
truncate -s $((size / 2 * 3)) "$T/data"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "the data differs after the reshape"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the reshape: $(status_json)"
stop_server
members=$(echo "$T"/r6/d0.img "$T"/r6/d1.img "$T"/r6/d2.img "$T"/r6/d3.img "$T"/r6/s0.img)
check_members_hold "$T/data"
echo "ok: read errors in a RAID6 reshape computed around, the reshape ended"
