#!/usr/bin/env bash
# The superblocks, not the order of the config's lines, say which device
# holds which role: a config listing the members shuffled, or a rebuilt
# spare still listed as "spare", serves the same data.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

new_array r6 6 left-asymmetric 64K 5 4M
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
stop_server
d=$T/r6
write_config "$T/shuffled.conf" 6 left-asymmetric 64K \
  "$d/d3.img" "$d/d0.img" "$d/d4.img" "$d/d2.img" "$d/d1.img"
start_server "$T/shuffled.conf"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "shuffled config reads different data"
stop_server
echo "ok: a shuffled config serves the same array"

# A spare the server rebuilt into a failed member's role, with the
# config left as it was (the spare still "spare =", the failed device
# still a member line, as an mdadm user leaves a DEVICE list): the
# superblocks put the spare in role 2, and it serves the same data.
d=$T/sp
make_members "$d" 5 4M
truncate -s 4M "$d/s0.img"
# shellcheck disable=SC2046
write_config "$d/a.conf" 6 left-asymmetric 64K $(member_paths "$d" 5)
echo "spare = $d/s0.img" >> "$d/a.conf"
"$NBDRAID" create --assume-clean "$d/a.conf" 2>> "$T/create.log" ||
  die "nbdraid create with a spare failed: $(tail -1 "$T/create.log")"
conf=$d/a.conf
cp "$conf" "$T/original.conf"
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy --flush "$T/data" "$uri"
"$NBDRAID" fail "$conf" 2 > /dev/null || die "nbdraid fail 2 refused"
wait_status 60 "j['working'] == 5 and j['job']['kind'] == 'idle' and j['devices'][2]['path'] == '$d/s0.img'"
stop_server

conf=$T/original.conf
grep -qx "spare = $d/s0.img" "$conf" ||
  die "the original config does not list s0 as a spare: $(cat "$conf")"
grep -qx "member = $d/d2.img" "$conf" ||
  die "the original config does not list d2 as a member: $(cat "$conf")"
start_server "$conf"
status_is "j['working'] == 5 and j['devices'][2]['role'] == 2 and j['devices'][2]['state'] == 'active' and j['devices'][2]['path'] == '$d/s0.img'" ||
  die "the rebuilt spare is not active in role 2: $(status_json)"
status_is "all(x['path'] != '$d/d2.img' or x['role'] == -1 for x in j['devices'])" ||
  die "the failed d2.img holds a role: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "the array with the rebuilt spare reads different data"
stop_server
members="$d/d0.img $d/d1.img $d/s0.img $d/d3.img $d/d4.img"
check_members_hold "$T/data"
echo "ok: a rebuilt spare still listed as spare serves role 2"
