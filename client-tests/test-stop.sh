#!/usr/bin/env bash
# nbdraid stop, as mdadm --stop: refused while a client is connected;
# with --force nbdkit exits when the last client has gone, leaving the
# array clean (its superblocks say so: no resync at the next start).
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh

new_array r5 5 left-symmetric 64K 3 8M --assume-clean
start_server "$conf"
nbdsh -u "$uri" -c '
import time
h.pwrite(b"x" * 4096, 0)
time.sleep(30)' &
client=$!
cleanup_fn "kill $client 2>/dev/null"
wait_status 10 "not j['clean']"
if out=$("$NBDRAID" stop "$conf" 2>&1); then die "stop under a client: $out"; fi
grep -q "array test has 1 client connected; with --force it stops once it has gone" <<< "$out" ||
  die "stop refused with: $out"
kill -0 "$server_pid" || die "the refused stop stopped the server"

out=$("$NBDRAID" stop "$conf" --force) || die "stop --force: $out"
grep -q "stopping array test" <<< "$out" || die "stop said: $out"
sleep 1     # a moment in which nbdkit must not leave its client
kill -0 "$server_pid" || die "nbdkit left its client"
kill "$client"
timeout 20 tail --pid="$server_pid" -f /dev/null || die "nbdkit did not exit"
wait "$server_pid" 2>/dev/null || :
server_pid=
grep -q "State : clean" <<< "$("$NBDRAID" examine "$T/r5/d0.img")" ||
  die "not stopped clean: $("$NBDRAID" examine "$T/r5/d0.img")"
echo "ok: stop refused under a client, stopped clean with --force"
