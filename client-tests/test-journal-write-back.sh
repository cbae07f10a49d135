#!/usr/bin/env bash
# journal-mode = write-back (md's r5c cache) on a RAID6 with its journal
# behind NBD: small writes are acknowledged once logged and read back
# from the cache before any member has them; a kill -9 with the cache
# full loses none of them (the replay keeps the data logged without
# parity and writes it); fio --verify runs over it; a clean stop leaves
# every member as md lays it out with P and Q right.  Then the journal
# fails with writes cached: the array turns read-only, the cache goes
# to the members all the same, and a read-only start without the
# journal reads every acknowledged byte.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires fio
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

nbd_array r6 6 left-symmetric 64K 5 8M
members=$(member_paths "$T/r6" 5)
sed -i '/^\[array\]/a heartbeat = off' "$conf"
failing_journal r6 4M write-back

# pages MODEL SEED N: write N random 4K pages (FUA every tenth) through
# the array and into MODEL, and read each back at once
pages () {
  /usr/bin/python3 - "$uri" "$@" <<'PY'
import random, sys
import nbd
uri, model, seed, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
h = nbd.NBD()
h.connect_uri(uri)
rng = random.Random(seed)
with open(model, "r+b") as m:
    pages = h.get_size() // 4096
    for i in range(n):
        off = rng.randrange(pages) * 4096
        data = rng.randbytes(4096)
        h.pwrite(data, off, nbd.CMD_FLAG_FUA if i % 10 == 0 else 0)
        m.seek(off)
        m.write(data)
        if h.pread(4096, off) != data:
            sys.exit("page at %d reads back otherwise" % off)
    h.flush()
PY
}

start_server "$conf"
status_is "j['journal']['mode'] == 'write-back' and j['journal']['cache_limit'] > 0" ||
  die "status does not show write-back: $(status_json)"
grep -q "consistency policy: journal (write-back), .* cached" \
  <<< "$("$NBDRAID" status "$conf")" ||
  die "status text: $("$NBDRAID" status "$conf")"
size=$(export_size)
random_file "$T/model" "$size"
nbdcopy --flush "$T/model" "$uri" || die "nbdcopy: $(tail -3 "$T/nbdkit.log")"
pages "$T/model" 1 300 || die "cached pages read back otherwise"
status_is "j['journal']['cached_bytes'] > 0" ||
  die "nothing cached after small writes: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/model" "$T/out" || die "the array does not read as written (cache over members)"

# The power cut, just after a few more pages: they are in the cache
# (the destage thread may have written the older ones) and not on the
# members.
pages "$T/model" 4 10 || die "cached pages read back otherwise (4)"
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || :
server_pid=
start_server "$conf"
grep -q "write journal replayed .* [1-9][0-9]* pages without parity kept to write" \
  "$T/nbdkit.log" || die "the replay kept no cached page: $(grep journal "$T/nbdkit.log")"
nbdcopy "$uri" "$T/out"
cmp "$T/model" "$T/out" || die "acknowledged writes lost to kill -9"

fio --name=wb --ioengine=nbd --uri="$uri" --rw=randrw --bs=4k \
  --iodepth=8 --size=$((size / 2)) --verify=crc32c --verify_fatal=1 \
  --do_verify=1 --output="$T/fio.out" || die "fio --verify: $(tail -5 "$T/fio.out")"
nbdcopy --flush "$T/model" "$uri" || die "nbdcopy: $(tail -3 "$T/nbdkit.log")"
status_is "j['journal']['cached_bytes'] == 0" ||
  die "stripes written through kept their cached pages: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/model" "$T/out" || die "whole-stripe writes over cached pages read back otherwise"
pages "$T/model" 2 200 || die "cached pages read back otherwise (2)"
stop_server
check_members_hold "$T/model"

# The journal fails with pages cached: read-only, cache on the members.
start_server "$conf"
pages "$T/model" 3 100 || die "cached pages read back otherwise (3)"
status_is "j['journal']['cached_bytes'] > 0" ||
  die "nothing cached before the failure: $(status_json)"
touch "$T/trigger"
/usr/bin/python3 - "$uri" > "$T/writes.out" <<'PY'
import sys
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
try:
    h.pwrite(b"\xab" * 4096, 0)
    print("write: ok")
except nbd.Error as e:
    print("write: %s" % e.errno)
PY
grep -q "write: E\(IO\|PERM\)" "$T/writes.out" || die "write on a failed journal: $(cat "$T/writes.out")"
for _ in $(seq 50); do
  status_is "j['readonly'] and j['journal']['cached_bytes'] == 0" && break
  sleep 0.2
done
status_is "j['readonly'] and j['journal']['state'] == 'faulty' and j['journal']['cached_bytes'] == 0" ||
  die "the cache did not reach the members after the journal failed: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/model" "$T/out" || die "reads differ after the journal failed"
stop_server
rm -f "$T/trigger"
start_server "$conf" readonly=true
nbdcopy "$uri" "$T/out"
cmp "$T/model" "$T/out" || die "acknowledged writes missing from the members"
stop_server
echo "ok: write-back: cached writes read back, survive kill -9, fio" \
  "verifies; a failed journal leaves the array read-only with the cache" \
  "on the members"
