#!/usr/bin/env bash
# A write journal whose device fails (nbdkit's error filter, switched
# on by a trigger file): md refuses writes without its journal, so the
# array turns read-only.  The write that met the failure fails and
# changes nothing on the members; later writes are refused; every byte
# written before reads back, then and after a restart.  The members'
# superblocks record the journal faulty: the array then starts only
# read-only (md's rule for a missing journal), which status shows.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

nbd_array r5 5 left-symmetric 16K 4 4M
failing_journal r5 2M

start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"

touch "$T/trigger"
# shellcheck disable=SC2016
/usr/bin/python3 - "$uri" > "$T/writes.out" <<'PY'
import sys
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
for i in range(2):
    try:
        h.pwrite(b"\xab" * 4096, 65536 * (i + 1), nbd.CMD_FLAG_FUA)
        print("write %d: ok" % i)
    except nbd.Error as e:
        print("write %d: %s" % (i, e.errno))
PY
grep -q "write 0: EIO" "$T/writes.out" ||
  die "the write that met the failed journal: $(cat "$T/writes.out")"
# (NBD carries the engine's EROFS as EPERM.)
grep -q "write 1: EPERM" "$T/writes.out" ||
  die "a write after the journal failed: $(cat "$T/writes.out")"
grep -q "write journal nbd+unix:///?socket=$T/r5-j.sock failed: .*Input/output error; .*read-only now" \
  "$T/nbdkit.log" || die "the failure is not logged: $(tail -3 "$T/nbdkit.log")"
status_is "j['readonly'] and j['journal']['state'] == 'faulty'" ||
  die "status: $(status_json)"
"$NBDRAID" status --prometheus "$conf" > "$T/prom"
grep -q '^nbdraid_journal_failed{array="test"} 1$' "$T/prom" ||
  die "prometheus: $(grep journal "$T/prom")"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "the failed write changed the array"
stop_server

# Restarted: recorded faulty, refused unless read-only.
rm -f "$T/trigger"
rm -f "$T/x.sock"
if nbdkit -f -U "$T/x.sock" "$PLUGIN" "$conf" 2> "$T/refused.log"; then
  die "started without its journal"
fi
grep -q "its write journal nbd+unix:///?socket=$T/r5-j.sock is missing: the superblocks record it as failed; .*readonly=true" \
  "$T/refused.log" || die "refused, but not as md's rule: $(cat "$T/refused.log")"
start_server "$conf" readonly=true
status_is "j['journal']['state'] == 'missing'" || die "status: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data lost after the journal failed"
stop_server
echo "ok: a failed journal turns the array read-only; it starts read-only after"
