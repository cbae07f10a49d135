#!/usr/bin/env bash
# nbdraid remove lets the device go: the server closes a removed member
# file (the space of a deleted one comes back, a loop device can be
# detached) and the connections of a removed NBD member, while clients
# keep reading the array, and none of those reads goes wrong.  Before,
# every device that left stayed open until the server stopped.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

# holds PATTERN: the server has a descriptor open on a path matching it
holds () {
  ls -l "/proc/$server_pid/fd" 2>/dev/null | grep -q -- "$1"
}

new_array r5 5 left-symmetric 32K 5 16M --assume-clean
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy --flush "$T/data" "$uri"
holds "$T/r5/d4.img" || die "the server does not hold d4.img to begin with"

# Readers all along, so requests are in flight when the member leaves.
(
  end=$((SECONDS + 4))
  while [ $SECONDS -lt $end ]; do
    nbdcopy --connections=4 "$uri" "$T/bg.out" || exit 1
    cmp -s "$T/data" "$T/bg.out" || exit 2
  done
) &
readers=$!

"$NBDRAID" fail "$conf" 4 > /dev/null
"$NBDRAID" remove "$conf" "$T/r5/d4.img" > /dev/null
wait_for 10 sh -c "! ls -l /proc/$server_pid/fd | grep -q -- '$T/r5/d4.img'" ||
  die "d4.img still open 10 s after nbdraid remove"
rm "$T/r5/d4.img"
wait "$readers" || die "a client read during the removal failed or differed (code $?)"

truncate -s 16M "$T/s0.img"
"$NBDRAID" add "$conf" "$T/s0.img" > /dev/null
"$NBDRAID" wait "$conf"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data differs after the rebuild"
stop_server
members=$(member_paths "$T/r5" 5 4 "$T/s0.img")
check_members_hold "$T/data"

# An NBD member: its connections close when it is removed.
make_members "$T/n1" 2 16M
for i in 0 1; do
  start_member "n1-$i" "$T/n1/d$i.img" --filter=log -- logfile="$T/n1-$i.log"
  uris[i]=$member_uri
done
write_config "$T/n1/a.conf" 1 - - "${uris[@]}"
conf=$T/n1/a.conf
"$NBDRAID" create --assume-clean "$conf" > /dev/null
start_server "$conf"
random_file "$T/data1" "$(export_size)"
nbdcopy --flush "$T/data1" "$uri"
# count WHAT I: lines of member I's log saying WHAT (Connect, Disconnect)
count () {
  grep -c " $1 " "$T/n1-$2.log"
}
open1=$(( $(count Connect 1) - $(count Disconnect 1) ))
[ "$open1" -gt 0 ] || die "the server holds no connection to member 1"
gone0=$(count Disconnect 0)
"$NBDRAID" fail "$conf" 1 > /dev/null
"$NBDRAID" remove "$conf" 1 > /dev/null
all_closed () {
  [ "$(count Connect 1)" = "$(count Disconnect 1)" ]
}
wait_for 10 all_closed ||
  die "NBD member 1: $(( $(count Connect 1) - $(count Disconnect 1) )) of $open1 connections still open 10 s after nbdraid remove"
[ "$(count Disconnect 0)" = "$gone0" ] ||
  die "member 0, still in the array, was disconnected"
nbdcopy "$uri" "$T/out"
cmp "$T/data1" "$T/out" || die "data differs with the NBD member removed"
echo "ok: a removed member's file and connections are let go at once"
