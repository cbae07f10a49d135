#!/usr/bin/env bash
# Read-ahead through the server.  A RAID6 of NBD members (which read
# ahead by default) read by one client in 64K requests, one at a time,
# as dd or a booting guest would, while the client writes now and then
# into the next MiB, which the windows ahead of it already hold: every
# read must match an independent copy of what was written, and the
# members must have been read in window-sized pieces (member 0's log filter says) (a 64K request on
# 32K chunks reads at most 64K of a member).  With read-ahead = off
# they are not.  Then one member's server dies and the stream reads on
# through reconstruction.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

# stream URI MODEL WRITES: read the export in 64K requests in order;
# with WRITES=1, every eighth request writes 4K somewhere in the MiB
# ahead of it (and the model with it).  Fails on the first difference.
stream () {
  /usr/bin/python3 - "$@" <<'EOF'
import nbd, random, sys
uri, path, writes = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
h = nbd.NBD()
h.connect_uri(uri)
model = bytearray(open(path, "rb").read())
step, rnd, pos = 65536, random.Random(46), 0
while pos < len(model):
    n = min(step, len(model) - pos)
    if h.pread(n, pos) != model[pos:pos + n]:
        sys.exit("read of %d bytes at %d differs from what was written" % (n, pos))
    pos += n
    if writes and (pos // step) % 8 == 0 and pos + (2 << 20) < len(model):
        off = pos + rnd.randrange(0, 1 << 20) // 4096 * 4096
        data = rnd.randbytes(4096)
        h.pwrite(data, off)
        model[off:off + 4096] = data
h.flush()
open(path, "wb").write(model)
EOF
}

# The largest read member 0's log filter saw after line $1 of its log.
largest_member_read () {
  tail -n "+$(($1 + 1))" "$T/mlog" |
    grep -o 'Read id=[0-9]* offset=0x[0-9a-f]* count=0x[0-9a-f]*' |
    sed 's/.*count=//' | while read -r c; do echo $((c)); done |
    sort -n | tail -1
}

nbd_array ra 6 left-symmetric 32K 6 8M
kill_member ra-0
start_member ra-0 "$T/ra/d0.img" --filter=log -- logfile="$T/mlog"
start_server "$conf"
random_file "$T/model" "$(export_size)"
nbdcopy "$T/model" "$uri"
seen=$(wc -l < "$T/mlog")
stream "$uri" "$T/model" 1 || die "a stream with writes ahead of it read wrong"
nbdcopy "$uri" "$T/out"
cmp "$T/model" "$T/out" || die "the array differs from its model after the stream"
largest=$(largest_member_read "$seen")
[ "${largest:-0}" -gt 65536 ] ||
  die "members were read in pieces of at most ${largest:-0} bytes: no read-ahead"
hits=$(status_json | /usr/bin/python3 -c '
import json, sys; print(json.load(sys.stdin)["requests"]["read_ahead_hits"])')
[ "$hits" -gt 0 ] || die "nbdraid status counts no read served from windows"
echo "ok: a 64K stream reads what was written, members read $largest bytes at once, $hits reads from windows"

stop_server
sed -i '/^\[array\]/a read-ahead = off' "$conf"
start_server "$conf"
seen=$(wc -l < "$T/mlog")
stream "$uri" "$T/model" 0 || die "read-ahead = off: the stream read wrong"
largest=$(largest_member_read "$seen")
[ "${largest:-0}" -le 65536 ] ||
  die "read-ahead = off, yet a member read $largest bytes at once"
hits=$(status_json | /usr/bin/python3 -c '
import json, sys; print(json.load(sys.stdin)["requests"]["read_ahead_hits"])')
[ "$hits" = 0 ] || die "read-ahead = off, yet $hits reads came from windows"
echo "ok: read-ahead = off reads what each request asks"

stop_server
sed -i '/^read-ahead = off$/d' "$conf"
start_server "$conf"
kill_member ra-3
stream "$uri" "$T/model" 1 || die "a stream with a member gone read wrong"
nbdcopy "$uri" "$T/out"
cmp "$T/model" "$T/out" || die "the degraded array differs from its model"
echo "ok: the stream reads on with a member's server gone"
