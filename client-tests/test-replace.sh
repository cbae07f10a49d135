#!/usr/bin/env bash
# nbdraid replace rebuilds a healthy member's contents onto a new device
# while the member keeps serving: the array never runs degraded (every
# role stays active throughout), clients keep writing, and afterwards the
# new device holds the role and md's layout.
. "$(dirname "$0")/lib.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

new_array r6 6 left-symmetric 32K 5 16M --assume-clean
echo "speed-max = 4M" > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"
truncate -s 16M "$T/new.img"
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
"$NBDRAID" replace "$conf" 2 --with "$T/new.img" > "$T/replace.out" ||
  die "replace refused: $(cat "$T/replace.out")"
status_is "j['job']['kind'] == 'replace' and j['working'] == 5" ||
  die "not replacing with every member active: $(status_json)"
# Clients write while it runs; every role stays active all along.
/usr/bin/python3 "$abs_top_srcdir/client-tests/random-io.py" "$uri" 150 3 \
  --expect "$T/data" --save "$T/expect" > /dev/null || die "random I/O failed"
status_is "j['working'] == 5" || die "degraded during the replacement"
"$NBDRAID" speed-limit "$conf" 50 0 > /dev/null
wait_status 60 "j['job']['kind'] == 'idle' and j['devices'][2]['path'] == '$T/new.img'"
status_is "j['working'] == 5" || die "not every member active after it"
status_is "any(d['path'] == '$T/r6/d2.img' and d['role'] == -1 for d in j['devices'])" ||
  die "the replaced device is not listed apart: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/expect" "$T/out" || die "data differs after the replacement"
stop_server
grep -q "^spare = $T/new.img\$" "$conf" || die "config not updated"
members="$T/r6/d0.img $T/r6/d1.img $T/new.img $T/r6/d3.img $T/r6/d4.img"
check_members_hold "$T/expect"
# Restarted, the array assembles with the new device in role 2.
start_server "$conf"
status_is "j['devices'][2]['path'] == '$T/new.img' and j['working'] == 5" ||
  die "after a restart: $(status_json)"
stop_server
echo "ok: member 2 replaced with no degraded window"
