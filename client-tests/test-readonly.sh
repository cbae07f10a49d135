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
