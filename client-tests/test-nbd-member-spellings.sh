#!/usr/bin/env bash
# A MEMBER given as an NBD URI finds the member however the URI is
# spelt: scheme and host in any case, "" or "/" for the empty export,
# the socket by another path to it, the query percent-encoded.  fail,
# remove and add take such spellings of an NBD member of a running
# RAID5; an export of another name on the same socket is not it, and
# adding a spare again under another spelling is refused.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

# encode TEXT: TEXT percent-encoded, '/' included
encode () {
  /usr/bin/python3 -c 'import sys, urllib.parse
print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"
}

create_opts=(--assume-clean)
nbd_array u 5 left-symmetric 64K 3 8M
truncate -s 8M "$T/u/s0.img"
start_member u-s0 "$T/u/s0.img"
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy --flush "$T/data" "$uri"
grep -qxF "member = nbd+unix:///?socket=$T/u-1.sock" "$conf" ||
  die "the config does not name member 1 as expected: $(cat "$conf")"

spelling="NBD+UNIX://?socket=$T/u/../u-1.sock"
out=$("$NBDRAID" fail "$conf" "$spelling") || die "fail $spelling: $out"
status_is "j['devices'][1]['state'] == 'faulty'" ||
  die "$spelling did not name member 1: $(status_json)"
echo "ok: fail $spelling"

other="nbd+unix:///other?socket=$T/u-1.sock"
if out=$("$NBDRAID" remove "$conf" "$other" 2>&1); then
  die "remove $other (another export) succeeded: $out"
fi
grep -qF "has no member $other" <<< "$out" || die "remove $other: $out"
echo "ok: another export on the same socket is not member 1"

spelling="nbd+unix:///?socket=$(encode "$T/u-1.sock")"
out=$("$NBDRAID" remove "$conf" "$spelling") || die "remove $spelling: $out"
status_is "j['devices'][1]['state'] == 'missing' and j['devices'][1]['why'] == 'removed by the admin'" ||
  die "$spelling did not name member 1: $(status_json)"
grep -qF "# removed by nbdraid: nbd+unix:///?socket=$T/u-1.sock" "$conf" ||
  die "the config keeps member 1: $(cat "$conf")"
echo "ok: remove $spelling"

spelling="nbd+unix://?socket=$T/./u-s0.sock"
out=$("$NBDRAID" add "$conf" "$spelling") || die "add $spelling: $out"
"$NBDRAID" wait "$conf" > /dev/null
wait_status 30 "j['working'] == 3 and j['job']['kind'] == 'idle'"
again="Nbd+Unix:///?socket=$T/u-s0.sock"
if out=$("$NBDRAID" add "$conf" "$again" 2>&1); then
  die "add $again, the spare added as $spelling, succeeded: $out"
fi
grep -qF "$again is already in array" <<< "$out" || die "add $again: $out"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "data differs after the rebuild"
echo "ok: add $spelling rebuilt member 1; add $again refused"

out=$("$NBDRAID" fail "$conf" "$again") || die "fail $again: $out"
status_is "j['devices'][1]['state'] == 'faulty' and j['devices'][1]['path'] == '$spelling'" ||
  die "$again did not name the spare now member 1: $(status_json)"
echo "ok: fail $again finds the member added as $spelling"
stop_server
