#!/usr/bin/env bash
# Mirrors across hosts, striped: RAID0 over two RAID1 groups whose
# members are NBD exports (four "hosts", one nbdkit each).  Random I/O
# with several requests in flight goes through while one host of each
# mirror is killed with SIGKILL; the client sees no error, both groups
# fail the dead member and run on, and every byte reads back right,
# then again after a restart.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

RANDOM_IO="/usr/bin/python3 $abs_top_srcdir/client-tests/random-io.py"
d=$T/n
make_members "$d" 4 12M
for i in 0 1 2 3; do
  start_member "host$i" "$d/d$i.img"
done
conf=$d/a.conf
{
  printf '[array]\nname = top\nsocket = %s\nlevel = 0\nchunk = 64K\n' \
    "$d/top.sock"
  printf 'nbd-timeout = 3\nnbd-connect-timeout = 3\nnbd-connections = 1\n'
  printf '[members]\nmember = array:g0\nmember = array:g1\n'
  for g in 0 1; do
    printf '[array g%s]\nlevel = 1\n[members g%s]\n' "$g" "$g"
    for i in $((2 * g)) $((2 * g + 1)); do
      echo "member = nbd+unix:///?socket=$T/host$i.sock"
    done
  done
} > "$conf"
"$NBDRAID" create "$conf" 2>> "$T/create.log" ||
  { cat "$T/create.log" >&2; die "nbdraid create failed"; }

start_server "$conf"
$RANDOM_IO "$uri" 400 21 --kill-after 100 "${member_pids[host1]}" \
  --kill-after 250 "${member_pids[host2]}" --save "$T/expect" ||
  die "the client saw an error"
grep -q "array g0: member 1 .* failed" "$T/nbdkit.log" ||
  die "g0 did not fail its dead member"
grep -q "array g1: member 0 .* failed" "$T/nbdkit.log" ||
  die "g1 did not fail its dead member"
nbdcopy "$uri" "$T/out"
cmp "$T/expect" "$T/out" || die "data lost with one host of each mirror dead"
stop_server

# The superblocks recorded the failures: the next start needs no help.
start_server "$conf"
nbdcopy "$uri" "$T/out2"
cmp "$T/expect" "$T/out2" || die "data lost across the restart"
stop_server
echo "ok: striped mirrors of NBD members survive a host per mirror killed"
