#!/usr/bin/env bash
# The 24-disk RAID10 of conf/, spread over three controllers, loses all
# eight members of one controller (their NBD servers killed) while a fio
# verify job runs: fio sees no error and verifies every block.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires fio
fio --enghelp 2>/dev/null | grep -qw nbd || skip "fio has no nbd engine"

example=$abs_top_srcdir/conf/raid10-24disk-3controllers.conf
mkdir -p "$T/m"
# Serve each member file with its own nbdkit; point the config at them.
i=0
while read -r ctrl; do
  truncate -s 8M "$T/m/d$i.img"
  start_member "m$i" "$T/m/d$i.img"
  echo "$ctrl $member_uri"
  i=$((i + 1))
done < <(sed -n 's/^member = .* controller=\(c[0-9]\)$/\1/p' "$example") > "$T/members"
[ "$(wc -l < "$T/members")" = 24 ] || die "expected 24 members in $example"
{
  sed -n '1,/^\[members\]/p' "$example" |
    sed "/^\[array\]/a nbd-timeout = 3\nsocket = $T/a.sock"
  awk '{ print "member = " $2 " controller=" $1 }' "$T/members"
} > "$T/a.conf"
"$NBDRAID" create --assume-clean "$T/a.conf" 2> "$T/create.log" || die "$(cat "$T/create.log")"
grep -q "survives the loss of any one controller: c0 (8), c1 (8), c2 (8)" "$T/create.log" ||
  die "create did not confirm controller survival: $(cat "$T/create.log")"

start_server "$T/a.conf"
size=$(export_size)
fio --name=ctrl --ioengine=nbd --uri="$uri" --rw=randwrite --bs=16k \
  --iodepth=16 --size="$size" --verify=crc32c --verify_state_save=0 --do_verify=1 \
  --verify_fatal=1 --rate_iops=1500 --output="$T/fio.out" > /dev/null 2>&1 &
fio_pid=$!
cleanup_fn "kill $fio_pid 2>/dev/null"
# Once fio has written a good part of the array, controller c1 goes.
written () { [ "$(du -k -c "$T"/m/*.img | tail -1 | cut -f1)" -gt 20000 ]; }
wait_for 60 written || die "fio wrote nothing"
for n in $(awk '$1 == "c1" { print NR - 1 }' "$T/members"); do
  kill_member "m$n"
done
wait "$fio_pid" || { cat "$T/fio.out"; die "fio saw an error"; }
grep -q "err= 0" "$T/fio.out" || die "fio reported errors: $(cat "$T/fio.out")"
[ "$(grep -c "member .* failed" "$T/nbdkit.log")" = 8 ] ||
  die "expected 8 failed members: $(grep failed "$T/nbdkit.log")"
stop_server
echo "ok: 24-disk RAID10 lost controller c1 (8 members) under fio verify"
