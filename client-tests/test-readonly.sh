#!/usr/bin/env bash
# readonly=true: the members are opened read-only, reads work, every
# write is refused, and not one byte of any member changes.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh

new_array ro 5 left-symmetric 64K 4 4M --assume-clean
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
stop_server
before=$(cat "$T"/ro/*.img | sha256sum)

start_server "$conf" readonly=true
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "read-only read differs"
nbdsh -u "$uri" -c '
assert not h.can_trim() and not h.can_zero()
assert h.is_read_only()
try:
    h.pwrite(b"x" * 512, 0)
    raise SystemExit("write succeeded")
except nbd.Error:
    pass
'
stop_server
[ "$(cat "$T"/ro/*.img | sha256sum)" = "$before" ] || die "members changed"
echo "ok: read-only serving changes nothing"

# nbdkit -r (and --readonly): nothing writes either, not even the
# server's own work.  An array that needs a resync, and one degraded
# with a spare that would start rebuilding, stay byte for byte as they
# were while their data reads back.
new_array ro2 5 left-symmetric 64K 4 4M
truncate -s 4M "$T/ro2/s0.img"
echo "spare = $T/ro2/s0.img" >> "$conf"
"$NBDRAID" create --force "$conf" 2>> "$T/create.log"
before=$(cat "$T"/ro2/*.img | sha256sum)
nbdkit_opts=(-r)
start_server "$conf"
nbdcopy "$uri" "$T/out"
nbdsh -u "$uri" -c 'assert h.is_read_only()'
sleep 2                         # the resync would have started by now
stop_server
[ "$(cat "$T"/ro2/*.img | sha256sum)" = "$before" ] ||
  die "nbdkit -r: an unsynced array's members changed"

new_array ro3 5 left-symmetric 64K 4 4M --assume-clean
truncate -s 4M "$T/ro3/s0.img"
echo "spare = $T/ro3/s0.img" >> "$conf"
"$NBDRAID" create --force --assume-clean "$conf" 2>> "$T/create.log"
nbdkit_opts=()
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy --flush "$T/data" "$uri"
stop_server
rm "$T/ro3/d2.img"
before=$(cat "$T"/ro3/*.img | sha256sum)
nbdkit_opts=(--readonly)
start_server "$conf" degraded=true
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "nbdkit --readonly: degraded read differs"
sleep 2
stop_server
[ "$(cat "$T"/ro3/*.img | sha256sum)" = "$before" ] ||
  die "nbdkit --readonly: a degraded array's members changed"
echo "ok: nbdkit -r and --readonly write nothing, not even metadata"
