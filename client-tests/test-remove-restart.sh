#!/usr/bin/env bash
# nbdraid remove of a failed member keeps its role in the config as
# "member = missing", so the member lines still count the array's
# roles: nbdraid verbs and a restarted server accept the config, the
# array comes up degraded without degraded=true (the superblocks record
# the loss), a spare added then rebuilds the role, and after another
# restart the spare holds it; by path and by role number; a member
# removed and re-added gets its line back.  A RAID6 of 4 members is the case where
# commenting the line out left a config below RAID6's minimum.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

new_array r6 6 left-symmetric 32K 4 8M --assume-clean
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy --flush "$T/data" "$uri"

"$NBDRAID" fail "$conf" 3 > /dev/null
"$NBDRAID" remove "$conf" "$T/r6/d3.img" > /dev/null
grep -qx "member = missing # removed by nbdraid: $T/r6/d3.img" "$conf" ||
  die "member line not kept as missing: $(cat "$conf")"
[ "$(grep -c '^member = ' "$conf")" = 4 ] || die "member lines not 4"
rm "$T/r6/d3.img"
status_is "j['working'] == 3" || die "status after remove: $(status_json)"
stop_server

# Restarted degraded: the superblocks say role 3 failed.
start_server "$conf"
status_is "j['working'] == 3 and j['devices'][3]['path'] == 'missing'" ||
  die "restarted: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "degraded read after restart differs"

truncate -s 8M "$T/s0.img"
"$NBDRAID" add "$conf" "$T/s0.img" > /dev/null
"$NBDRAID" wait "$conf"
status_is "j['working'] == 4 and j['devices'][3]['path'] == '$T/s0.img'" ||
  die "not rebuilt onto the spare: $(status_json)"
stop_server

start_server "$conf"
status_is "j['working'] == 4 and j['devices'][3]['path'] == '$T/s0.img'" ||
  die "after the rebuild and a restart: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data differs after the rebuild"

# The same by role number, as the README shows it.
"$NBDRAID" fail "$conf" 1 > /dev/null
"$NBDRAID" remove "$conf" 1 > /dev/null
grep -qx "member = missing # removed by nbdraid: $T/r6/d1.img" "$conf" ||
  die "remove by role number left the config: $(cat "$conf")"
truncate -s 8M "$T/s1.img"
"$NBDRAID" add "$conf" "$T/s1.img" > /dev/null
"$NBDRAID" wait "$conf"
stop_server
start_server "$conf"
status_is "j['working'] == 4 and j['devices'][1]['path'] == '$T/s1.img'" ||
  die "after the second rebuild and a restart: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data differs after the second rebuild"

# Removed, then re-added (md's --re-add): the line names the device
# again, with its options, so the next start finds it.
"$NBDRAID" fail "$conf" 2 > /dev/null
"$NBDRAID" remove "$conf" "$T/r6/d2.img" > /dev/null
sed -i "s|^member = missing # removed by nbdraid: $T/r6/d2.img\$|member = missing controller=c2 # removed by nbdraid: $T/r6/d2.img|" "$conf"
out=$("$NBDRAID" add "$conf" "$T/r6/d2.img" 2>&1) && die "add of a removed member accepted"
[ "$out" = "nbdraid: $T/r6/d2.img was removed from role 2 of array test: nbdraid re-add puts it back" ] ||
  die "add of a removed member: $out"
"$NBDRAID" re-add "$conf" "$T/r6/d2.img" > /dev/null || die "re-add refused"
"$NBDRAID" wait "$conf"
grep -qx "member = $T/r6/d2.img controller=c2" "$conf" ||
  die "re-add left the config: $(cat "$conf")"
stop_server
start_server "$conf"
status_is "j['working'] == 4 and j['devices'][2]['path'] == '$T/r6/d2.img'" ||
  die "after the re-add and a restart: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data differs after the re-add"
stop_server
members="$T/r6/d0.img $T/s1.img $T/r6/d2.img $T/s0.img"
check_members_hold "$T/data"

# A config may not list a missing spare.
cp "$conf" "$T/c.conf"
echo "spare = missing" >> "$T/c.conf"
out=$("$NBDRAID" status "$T/c.conf" 2>&1) && die "status accepted spare = missing"
case $out in
  *"c.conf:"*": a spare cannot be missing"*) ;;
  *) die "spare = missing: $out" ;;
esac
echo "ok: a removed member's role stays in the config across restarts"
