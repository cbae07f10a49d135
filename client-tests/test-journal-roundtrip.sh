#!/usr/bin/env bash
# A RAID6 with md's write journal: data written through nbdcopy reads
# back, the members hold it as md lays it out with every stripe's P and
# Q right (md-model.py), the journal device carries md's journal role
# and feature with the tail past the log after a clean stop, and the
# array comes back with the same bytes.  The log of 21 MiB of data and
# its parity fills the 3 MiB ring many times over: it wraps, the tail
# following the writes.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

dir=$T/j6
make_members "$dir" 5 8M
truncate -s 4M "$dir/journal.img"
# shellcheck disable=SC2046
write_config "$dir/a.conf" 6 left-symmetric 64K $(member_paths "$dir" 5)
conf=$dir/a.conf
members=$(member_paths "$dir" 5)
array_option "consistency-policy = journal"
echo "journal = $dir/journal.img" >> "$conf"
"$NBDRAID" create "$conf" 2>> "$T/create.log" ||
  die "create: $(tail -1 "$T/create.log")"

mdadm --examine "$dir/journal.img" > "$T/ex.txt" 2>&1 || :
grep -q "Device Role : Journal" "$T/ex.txt" ||
  die "mdadm does not see the journal role: $(cat "$T/ex.txt")"
grep -q "Feature Map : 0x200" "$T/ex.txt" ||
  die "the journal device lacks md's journal feature: $(grep Feature "$T/ex.txt")"
mdadm --examine "$dir/d0.img" > "$T/ex0.txt" 2>&1 || :
grep -q "Feature Map : 0x200" "$T/ex0.txt" ||
  die "member 0 lacks md's journal feature: $(cat "$T/ex0.txt")"

start_server "$conf"
status_is "j['consistency_policy'] == 'journal' and j['journal']['state'] == 'active' and j['journal']['path'].endswith('journal.img')" ||
  die "status does not show the journal: $(status_json)"
"$NBDRAID" status "$conf" > "$T/status"
grep -q "consistency policy: journal (write-through), $dir/journal.img active" \
  "$T/status" || die "status text: $(cat "$T/status")"
"$NBDRAID" detail "$conf" > "$T/detail" || die "detail failed"
grep -q "Consistency Policy : journal" "$T/detail" &&
  grep -q " - *journal *$dir/journal.img" "$T/detail" ||
  die "detail does not show the journal: $(cat "$T/detail")"
"$NBDRAID" examine --json "$dir/journal.img" > "$T/ex.json"
grep -q '"consistency_policy": "journal"' "$T/ex.json" ||
  die "examine --json: no journal policy: $(cat "$T/ex.json")"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --connections=4 --flush "$T/data" "$uri"
status_is "j['journal']['used_bytes'] < j['journal']['bytes'] and 4 * j['journal']['bytes'] < $size" ||
  die "the log did not wrap round its ring: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "read back differs"
stop_server
check_members_hold "$T/data"
grep -q "write journal replayed" "$T/nbdkit.log" &&
  die "a fresh journal had something to replay"

# The clean stop moved the tail to the latest meta block.
"$NBDRAID" examine "$dir/journal.img" > "$T/exj.txt"
tail1=$(sed -n 's/.*Journal Tail : \([0-9]*\).*/\1/p' "$T/exj.txt")
[ -n "$tail1" ] && [ "$tail1" -gt 0 ] ||
  die "the journal's tail did not move: $(cat "$T/exj.txt")"

start_server "$conf"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "read back after a restart differs"
if out=$("$NBDRAID" grow "$conf" --level 5 2>&1); then
  die "grow --level of a journaled array: $out"
fi
case $out in
  *"array test keeps a write journal: changing its level is not supported"*) ;;
  *) die "grow --level refused, but not for the journal: $out" ;;
esac
out=$("$NBDRAID" grow "$conf" --chunk 128K 2>&1) && die "grow --chunk of a journaled array: $out"
[ "$out" = "nbdraid: array test keeps a write journal: md reshapes no array with one" ] ||
  die "grow --chunk refused, but not for the journal: $out"
stop_server

# Without its journal the array starts only read-only (mdadm's rule).
mv "$dir/journal.img" "$dir/away.img"
rm -f "$T/x.sock"
if nbdkit -f -U "$T/x.sock" "$PLUGIN" "$conf" 2> "$T/refused.log"; then
  die "started without its journal"
fi
grep -q "array test: its write journal $dir/journal.img is missing: .*No such file.*; md will not start an array without its journal.*start it read-only (readonly=true)" \
  "$T/refused.log" || die "refused, but not as md's rule: $(cat "$T/refused.log")"
[ "$(grep -c . "$T/refused.log")" = 1 ] || die "not one line: $(cat "$T/refused.log")"
start_server "$conf" readonly=true
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "read back without the journal differs"
stop_server
echo "ok: RAID6 with a write journal: $size bytes, tail at sector $tail1;" \
  "refused without it unless read-only"
