#!/usr/bin/env bash
# nbdraid status shows the write-behind backlog: a RAID1 of a local file
# and a write-mostly NBD member 500 ms away for writes (nbdkit's delay
# filter), write-behind = 256.  While writes of 4K are behind (their
# client already answered), status --json, the text status and status
# --prometheus give writes outstanding and what they count of the limit
# 256; once a flush returned, none.
. "$(dirname "$0")/lib.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"
nbdkit --filter=delay null --dump-plugin > /dev/null 2>&1 ||
  skip "nbdkit has no delay filter"

mkdir -p "$T/w"
truncate -s 16M "$T/w/d0.img" "$T/w/d1.img"
start_member far "$T/w/d1.img" --filter=delay -- wdelay=500ms
conf=$T/w/a.conf
write_config "$conf" 1 - - "$T/w/d0.img" "$member_uri write-mostly"
array_option "write-behind = 256" "bitmap-chunk = 1M"
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create: $(cat "$T/create.log")"
start_server "$conf"
status_is "j['write_behind'] == {'limit': 256, 'outstanding': 0, 'slots': 0}" ||
  die "write-behind before any write: $(status_json)"

# 256 writes, each answered once the local copy has it; the 16 behind
# workers land them on the far member in 8 s or more.  All in the
# first MiB: one bitmap chunk, so that status, which waits for a bitmap
# update on the far member, does not wait more than once.  The writer
# flushes once told to ($T/go), and says when the flush returned.
/usr/bin/python3 - "$uri" "$T" > "$T/writer.log" 2>&1 <<'PY' &
import os, sys, time
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
for i in range(256):
    h.pwrite(os.urandom(4096), i * 4096)
open(sys.argv[2] + "/written", "w").close()
while not os.path.exists(sys.argv[2] + "/go"):
    time.sleep(0.01)
h.flush()
open(sys.argv[2] + "/flushed", "w").close()
h.shutdown()
PY
writer=$!
cleanup_fn "kill $writer 2>/dev/null"
wait_for 20 test -e "$T/written" || die "the writes were not answered: $(cat "$T/writer.log")"
status_json > "$T/during.json"
"$NBDRAID" status "$conf" > "$T/during.txt"
"$NBDRAID" status "$conf" --prometheus > "$T/during.prom"
touch "$T/go"
/usr/bin/python3 -c '
import json, sys
wb = json.load(open(sys.argv[1]))["write_behind"]
sys.exit(0 if wb["limit"] == 256 and 0 < wb["outstanding"] <= wb["slots"] else 1)' \
  "$T/during.json" || die "while writes are behind, status --json: $(cat "$T/during.json")"
grep -Eq "^ +write-behind: [1-9][0-9]* writes outstanding, [1-9][0-9]*/256 of the limit\$" "$T/during.txt" ||
  die "while writes are behind, status: $(cat "$T/during.txt")"
grep -Eqx 'nbdraid_write_behind_outstanding_writes\{array="test"\} [1-9][0-9]*' "$T/during.prom" &&
  grep -Fqx 'nbdraid_write_behind_limit{array="test"} 256' "$T/during.prom" ||
  die "while writes are behind, status --prometheus: $(grep write_behind "$T/during.prom")"
echo "ok: while behind: $(grep write-behind: "$T/during.txt" | sed 's/^ *//')"

wait "$writer" || die "the writer failed: $(cat "$T/writer.log")"
test -e "$T/flushed" || die "the flush did not return: $(cat "$T/writer.log")"
status_is "j['write_behind'] == {'limit': 256, 'outstanding': 0, 'slots': 0}" ||
  die "after the flush: $(status_json)"
grep -q "write-behind: 0 writes outstanding, 0/256 of the limit" <<< "$("$NBDRAID" status "$conf")" ||
  die "after the flush, status: $("$NBDRAID" status "$conf")"
grep -Fqx 'nbdraid_write_behind_outstanding_writes{array="test"} 0' <<< "$("$NBDRAID" status "$conf" --prometheus)" ||
  die "after the flush, status --prometheus shows writes outstanding"
echo "ok: after the flush: none outstanding"
stop_server
