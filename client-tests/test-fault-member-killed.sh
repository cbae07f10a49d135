#!/usr/bin/env bash
# Member servers killed with SIGKILL in the middle of a client's I/O (a
# pulled disk, a host that vanishes): the client sees no error while the
# level tolerates it, and every byte reads back right.  RAID6 loses two
# members, one after the other.
. "$(dirname "$0")/lib.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

RANDOM_IO="/usr/bin/python3 $abs_top_srcdir/client-tests/random-io.py"

nbd_array r6 6 left-symmetric 16K 6 4M
start_server "$conf"
$RANDOM_IO "$uri" 400 11 --kill-after 80 "${member_pids[r6-1]}" \
  --kill-after 250 "${member_pids[r6-4]}" --save "$T/r6.expect" ||
  die "the client saw an error"
grep -q "member 1 .* failed" "$T/nbdkit.log" || die "member 1 not failed"
grep -q "member 4 .* failed" "$T/nbdkit.log" || die "member 4 not failed"
stop_server
start_server "$conf"
nbdcopy "$uri" "$T/out"
cmp "$T/r6.expect" "$T/out" || die "data lost after two members died"
stop_server
echo "ok: RAID6 survives two member servers killed mid-I/O"

nbd_array r1 1 - - 2 4M
start_server "$conf"
$RANDOM_IO "$uri" 300 12 --kill-after 100 "${member_pids[r1-0]}" \
  --save "$T/r1.expect" || die "RAID1: the client saw an error"
nbdcopy "$uri" "$T/out"
cmp "$T/r1.expect" "$T/out" || die "RAID1: data lost"
stop_server
echo "ok: RAID1 survives a mirror's server killed mid-I/O"
