#!/usr/bin/env bash
# RAID1 mirrored across two hosts (network namespaces), DRBD-style:
# under fio --verify, one host's link is cut for longer than the request
# timeout.  The client sees no error (the member is failed and the
# mirror runs on); the link comes back, nbdraid re-add recovers only the
# regions written meanwhile, and check finds no mismatch.
. "$(dirname "$0")/lib.sh"
. "$abs_top_srcdir/client-tests/lib/netns.sh"
requires nbdkit
requires fio
fio --enghelp 2>/dev/null | grep -qw nbd || skip "fio has no nbd engine"

netns_hosts 3                   # host 0 serves the array; 1 and 2 a disk each
make_members "$T/m" 2 34M
serve_on_host disk1 1 "$T/m/d0.img"
u1=$member_uri
serve_on_host disk2 2 "$T/m/d1.img"
u2=$member_uri
write_config "$T/a.conf" 1 - - "$u1" "$u2"
printf 'nbd-timeout = 3\nnbd-connect-timeout = 3\nbitmap-chunk = 256K\n' > "$T/opts"
sed -i "/^\[array\]/r $T/opts" "$T/a.conf"
conf=$T/a.conf
on_host 0 "$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create: $(cat "$T/create.log")"
serve_array_on_host 0 "$conf"
member_bytes=$(status_json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["member_bytes"])')

# fio writes the first 8 MiB at a steady pace and verifies it.
fio --name=mirror --ioengine=nbd --uri="$uri" --rw=randwrite --bs=16k \
  --iodepth=8 --size=8M --loops=4 --verify=crc32c --verify_state_save=0 --do_verify=1 \
  --verify_fatal=1 --rate_iops=300 --output="$T/fio.out" > /dev/null 2>&1 &
fio_pid=$!
cleanup_fn "kill $fio_pid 2>/dev/null"
wait_for 30 sh -c "[ \$(du -k '$T/m/d1.img' | cut -f1) -gt 1000 ]" || die "fio wrote nothing"
link_down 2
wait_status 30 "j['devices'][1]['state'] == 'faulty'"
echo "ok: host 2 cut off; member 1 failed, the mirror runs on"
wait "$fio_pid" || { cat "$T/fio.out"; die "fio saw an error"; }
grep -q "err= 0" "$T/fio.out" || die "fio errors: $(cat "$T/fio.out")"

link_up 2
"$NBDRAID" re-add "$conf" "$u2" > /dev/null || die "re-add refused"
wait_status 60 "j['working'] == 2 and j['job']['kind'] == 'idle'"
rebuilt=$(last_work_bytes)
# fio wrote 8 MiB of the 33; rebuild windows round that up a little.
[ "$rebuilt" -gt 0 ] && [ "$rebuilt" -lt $((member_bytes / 2)) ] ||
  die "re-add rebuilt $rebuilt of $member_bytes bytes"
"$NBDRAID" check "$conf" > /dev/null
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the re-add"
nbdcopy "$uri" "$T/out"
stop_server
cmp "$T/out" "$T/m/d0.img" --ignore-initial=0:$((1024 * 1024)) -n "$(stat -c %s "$T/out")" ||
  die "the mirror copy differs from the array"
echo "ok: re-add after the link came back rebuilt $rebuilt of $member_bytes bytes; check = 0"
