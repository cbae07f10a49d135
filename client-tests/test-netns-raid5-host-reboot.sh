#!/usr/bin/env bash
# RAID5 across four hosts, AoE-style.  A host that restarts its server
# within the request timeout is reconnected to and never failed; one that
# stays down longer is failed without the client noticing, and when it
# is back auto-readd recovers only what it missed.  A host that comes
# back with another array's disk is refused by UUID.  Then: an
# unreachable host at assembly, a member of the wrong size.
. "$(dirname "$0")/lib.sh"
. "$abs_top_srcdir/client-tests/lib/netns.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"
RANDOM_IO="/usr/bin/python3 $abs_top_srcdir/client-tests/random-io.py"

netns_hosts 5                   # host 0 serves the array; 1..4 a disk each
make_members "$T/m" 4 34M
uris=()
for i in 0 1 2 3; do
  serve_on_host "disk$i" $((i + 1)) "$T/m/d$i.img"
  uris+=("$member_uri")
done
write_config "$T/a.conf" 5 left-symmetric 64K "${uris[@]}"
printf 'nbd-timeout = 4\nnbd-connect-timeout = 2\nbitmap-chunk = 256K\nauto-readd = true\n' > "$T/opts"
sed -i "/^\[array\]/r $T/opts" "$T/a.conf"
conf=$T/a.conf
on_host 0 "$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create: $(cat "$T/create.log")"
serve_array_on_host 0 "$conf"
member_bytes=$(status_json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["member_bytes"])')
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
wait_status 30 "j['bitmap']['dirty'] == 0"

# A quick reboot: host 3's server dies and is back within the timeout.
kill_member disk2
serve_on_host disk2 3 "$T/m/d2.img"
$RANDOM_IO "$uri" 100 1 --expect "$T/data" --save "$T/data" > /dev/null ||
  die "the client saw an error across a quick reboot"
status_is "j['working'] == 4" || die "a quick reboot failed the member: $(status_json)"
echo "ok: a server back within the timeout was reconnected to, not failed"

# A long one: host 3 stays down past the timeout while the client
# writes 2 MiB at the start of the array.
wait_status 30 "j['bitmap']['dirty'] == 0"
kill_member disk2
head -c 2M /dev/urandom > "$T/part"
nbdcopy "$T/part" "$uri" || die "the client saw an error while host 3 was down"
dd if="$T/part" of="$T/data" conv=notrunc status=none
wait_status 30 "j['devices'][2]['state'] == 'faulty'"

# It comes back with another array's disk: refused by UUID.
truncate -s 34M "$T/other.img"
write_config "$T/other.conf" 1 - - "$T/other.img" "$T/m/x.img"
truncate -s 34M "$T/m/x.img"
"$NBDRAID" create --assume-clean "$T/other.conf" 2>> "$T/create.log"
serve_on_host disk2 3 "$T/other.img"
if out=$("$NBDRAID" re-add "$conf" "${uris[2]}" 2>&1); then die "a foreign disk was re-added"; fi
grep -q "belongs to another array (.*), not to array test" <<< "$out" || die "unclear refusal: $out"
echo "ok: a foreign disk at the returning host is refused: $out"
kill_member disk2

# The real disk comes back: auto-readd brings it in, bitmap-guided.
serve_on_host disk2 3 "$T/m/d2.img"
wait_status 60 "j['working'] == 4 and j['job']['kind'] == 'idle'"
rebuilt=$(last_work_bytes)
[ "$rebuilt" -gt 0 ] && [ "$rebuilt" -lt $((member_bytes / 8)) ] ||
  die "auto-readd rebuilt $rebuilt of $member_bytes bytes"
"$NBDRAID" check "$conf" > /dev/null
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the re-add"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data differs"
stop_server
echo "ok: host 3 back after a long outage: auto-readd rebuilt $rebuilt of $member_bytes bytes; check = 0"

# Unreachable at assembly: a clear error after the connect timeout.
link_down 4
if out=$(on_host 0 nbdkit -U "$(new_socket)" "$PLUGIN" "$conf" --run true 2>&1); then
  die "started with host 4 unreachable"
fi
grep -q "1 member is missing: ${uris[3]} (${uris[3]}: connect timed out after 2 s)" <<< "$out" ||
  grep -q "1 member is missing: ${uris[3]} (connect timed out after 2 s)" <<< "$out" ||
  die "unclear: $out"
echo "ok: unreachable host: $(grep error: <<< "$out")"
link_up 4

# A member of the wrong size.
kill_member disk3
truncate -s 8M "$T/small.img"
dd if="$T/m/d3.img" of="$T/small.img" bs=1M count=8 conv=notrunc status=none
serve_on_host disk3 4 "$T/small.img"
if out=$(on_host 0 nbdkit -U "$(new_socket)" "$PLUGIN" "$conf" --run true 2>&1); then
  die "started with a short member: $out"
fi
# Refused by the superblock check (its data area ends past the member)
# or, if that passes, by the array's size check.
grep -qF -e "${uris[3]}: too small for the array" \
  -e "${uris[3]} (bad md superblock: member too small" <<< "$out" ||
  die "unclear: $out"
echo "ok: wrong size: $(grep error: <<< "$out")"
