#!/usr/bin/env bash
# nbdraid status shows each member's average read time and which one a
# mirror judges slow: in a RAID1 of a local file and an NBD member
# 2 ms away (nbdkit's delay filter), after reads, the far member's
# read_ns is above 1 ms and four times the local one's, it is slow and
# the local one is not, in status --json, the text status and
# status --prometheus alike; once failed, it is not called slow.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh
nbdkit --filter=delay null --dump-plugin > /dev/null 2>&1 ||
  skip "nbdkit has no delay filter"

mkdir -p "$T/w"
truncate -s 16M "$T/w/local.img" "$T/w/far.img"
start_member far "$T/w/far.img" --filter=delay -- rdelay=2ms
far=$member_uri
conf=$T/w/a.conf
write_config "$conf" 1 - - "$T/w/local.img" "$far"
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create: $(cat "$T/create.log")"
start_server "$conf"

status_is "j['devices'][0]['read_ns'] == 0 and j['devices'][1]['read_ns'] == 0 and not j['devices'][1]['slow']" ||
  die "read times before any read: $(status_json)"
# Reads one at a time: the first ones measure both copies; the far one
# is judged slow at the read after.
nbdsh -u "$uri" -c '
for i in range(64):
    h.pread(4096, i * 65536)
' || die "reads failed"
status_is "(j['devices'][1]['slow'] and not j['devices'][0]['slow'] and
  j['devices'][1]['read_ns'] > 1000000 and
  0 < 4 * j['devices'][0]['read_ns'] < j['devices'][1]['read_ns'])" ||
  die "status --json does not show the far member slow: $(status_json)"
echo "ok: status --json: $(status_json | /usr/bin/python3 -c '
import json, sys
print(", ".join("%s read_ns %d slow %s" % (d["path"], d["read_ns"], d["slow"])
                for d in json.load(sys.stdin)["devices"]))')"

"$NBDRAID" status "$conf" > "$T/text"
grep -Eq "^ +1 +active +$(sed 's/[?+.]/\\&/g' <<< "$far")  \(slow\)  reads [0-9.]+ ms\$" "$T/text" &&
  grep -Eq "^ +0 +active +$T/w/local.img  reads [0-9.]+ ms\$" "$T/text" ||
  die "the text status: $(cat "$T/text")"
echo "ok: status: $(grep -c reads "$T/text") members with read times, one (slow)"

"$NBDRAID" status "$conf" --prometheus > "$T/prom"
grep -Fqx "nbdraid_member_slow{array=\"test\",device=\"$far\",role=\"1\"} 1" "$T/prom" &&
  grep -Fqx "nbdraid_member_slow{array=\"test\",device=\"$T/w/local.img\",role=\"0\"} 0" "$T/prom" ||
  die "status --prometheus: $(grep slow "$T/prom")"
secs=$(sed -n "s|^nbdraid_member_read_seconds{array=\"test\",device=\"$far\",role=\"1\"} ||p" "$T/prom")
/usr/bin/python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 0.001 else 1)' "${secs:-0}" ||
  die "status --prometheus: far read seconds ${secs:-missing}"
echo "ok: status --prometheus: the far member reads in $secs s, slow"

# Judged at reads, the last judgement is not shown for a member failed
# since.
"$NBDRAID" fail "$conf" 1 > /dev/null || die "fail of the far member refused"
status_is "[(d['state'], d['slow']) for d in j['devices'] if d['path'] == '$far'] == [('faulty', False)]" ||
  die "the failed far member: $(status_json)"
echo "ok: the far member, failed, is not called slow"
stop_server
