#!/usr/bin/env bash
# RAID10 across two hosts with two disks each, controller = host: create
# --arrange puts every mirror pair across the hosts, and losing a whole
# host (its link cut under a verifying writer) loses nothing.
. "$(dirname "$0")/lib.sh"
. "$abs_top_srcdir/client-tests/lib/netns.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

netns_hosts 3                   # host 0 serves; hosts 1 and 2, two disks each
make_members "$T/m" 4 18M
lines=()
for i in 0 1 2 3; do
  host=$((i / 2 + 1))           # disks 0,1 on host 1; 2,3 on host 2
  serve_on_host "disk$i" "$host" "$T/m/d$i.img"
  lines+=("member = $member_uri controller=host$host")
done
{
  printf '[array]\nname = test\nsocket = %s\nlevel = 10\nlayout = n2\n' "$T/a.sock"
  printf 'chunk = 64K\nnbd-timeout = 3\nnbd-connect-timeout = 2\n'
  printf 'controllers = host1 host2\n[members]\n'
  printf '%s\n' "${lines[@]}"
} > "$T/a.conf"
conf=$T/a.conf
on_host 0 "$NBDRAID" create --assume-clean --arrange --strict-controllers \
  "$conf" > "$T/create.log" 2>&1 || die "create: $(cat "$T/create.log")"
grep -q "survives the loss of any one controller: host1 (2), host2 (2)" \
  "$T/create.log" || die "not arranged across hosts: $(cat "$T/create.log")"
serve_array_on_host 0 "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
link_down 2
/usr/bin/python3 "$abs_top_srcdir/client-tests/random-io.py" "$uri" 150 4 \
  --expect "$T/data" --save "$T/data" > /dev/null ||
  die "the client saw an error with host 2 gone"
wait_status 30 "j['working'] == 2"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data lost with host 2 gone"
stop_server
echo "ok: RAID10 across two hosts lost host 2 (two disks) and nothing else"
