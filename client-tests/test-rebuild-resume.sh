#!/usr/bin/env bash
# The server is killed with SIGKILL in the middle of a recovery onto a
# spare; restarted, the recovery resumes from the checkpoint in the
# spare's superblock (recovery_offset), not from zero, and completes with
# the data intact.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

create_opts=(--assume-clean)
nbd_spares=1
nbd_array r5 5 left-symmetric 64K 4 32M
echo "speed-max = 2M" > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
kill_member r5-1
nbdcopy "$uri" "$T/out"                 # fails member 1; the spare starts
cmp "$T/data" "$T/out" || die "degraded read differs"
total=$(status_json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["member_bytes"])')
wait_status 60 "j['devices'][1]['recovered_bytes'] > $total // 3"
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || :
server_pid=

start_server "$conf"
resumed=$(status_json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][1]["recovered_bytes"])')
[ "$resumed" -gt 0 ] || die "recovery restarted from zero"
status_is "j['devices'][1]['state'] == 'recovering'" || die "not recovering after restart"
"$NBDRAID" speed-limit "$conf" 10 0 > /dev/null
wait_status 60 "j['working'] == 4 and j['job']['kind'] == 'idle'"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data differs after the resumed recovery"
stop_server
members="$T/r5/d0.img $T/r5/s0.img $T/r5/d2.img $T/r5/d3.img"
check_members_hold "$T/data"
echo "ok: recovery resumed at $resumed of $total bytes after kill -9"
