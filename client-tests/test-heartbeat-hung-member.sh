#!/usr/bin/env bash
# A member that hangs without an error (its host stops answering:
# here its nbdkit is stopped with SIGSTOP) must not stop the heartbeat
# on the other members: a standby watches five beats (5 s) and takes
# over a heartbeat that stands still, so a beat held for the request
# timeout (20 s here) let it take the array from a server still
# serving.  Each hung member now holds a beat up by two intervals.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh

nbd_array hb 1 - - 3 8M
sed -i 's/^nbd-timeout = .*/nbd-timeout = 20/' "$conf"
start_server "$conf"
# beats: the heartbeat count of the record beside member 2's superblock
beats () {
  "$NBDRAID" examine "$T/hb/d2.img" | sed -n 's/.*(heartbeat \([0-9]*\),.*/\1/p'
}
first=$(beats)
sleep 2
[ "$(beats)" -gt "$first" ] || die "no heartbeat: $("$NBDRAID" examine "$T/hb/d2.img")"

hung=${member_pids[hb-0]}
kill -STOP "$hung"
cleanup_fn "kill -CONT $hung 2>/dev/null"
sleep 1
before=$(beats)
sleep 10
after=$(beats)
kill -CONT "$hung"
[ $((after - before)) -ge 2 ] ||
  die "with member 0 hung the heartbeat on member 2 went from $before to $after in 10 s"
echo "ok: with a member hung the heartbeat went on ($before to $after in 10 s)"

random_file "$T/data" 1M
nbdsh -u "$uri" -c "
h.pwrite(open('$T/data','rb').read(), 0)
h.flush()
assert h.pread(1048576, 0) == open('$T/data','rb').read()
" || die "the array does not serve once the member answers again"
echo "ok: the array serves once the member answers again"
