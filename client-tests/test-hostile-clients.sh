#!/usr/bin/env bash
# Hostile NBD clients against a RAID6 array: out-of-range, overflowing,
# zero-length, unaligned, maximum and oversized requests, an unknown
# command, writes cut off mid-payload, floods of connections.  Each gets
# nbdkit's documented error (or is served, where it is legal), and
# afterwards the array still holds exactly what was written and is
# healthy.  nbdkit's limit filter caps the number of clients.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh
requires nbdcopy
hostile=(/usr/bin/python3 "$abs_top_srcdir/client-tests/hostile-nbd.py")

# The export must read back as $T/pattern and the array be healthy.
intact () {
  nbdcopy "$uri" "$T/out"
  cmp "$T/pattern" "$T/out" || die "after $1: the data differs"
  rm -f "$T/out"
  status_is 'j["working"] == j["members"] == 6 and not j["failed"]' ||
    die "after $1: array not healthy: $(status_json 2>&1)"
  echo "ok: after $1 the data is intact and the array healthy"
}

# 6 members x 20M, 64K chunks: 76 MiB, room for one 64 MiB request.
new_array a 6 left-symmetric 64K 6 20M --assume-clean
start_server "$conf"
size=$(export_size)
random_file "$T/pattern" "$size"
nbdcopy --flush "$T/pattern" "$uri"
intact "writing the pattern"

# libnbd in non-strict mode sends what it would otherwise refuse.
# nbdkit answers out-of-range reads, trims and zero-length requests with
# EINVAL and out-of-range writes and zeroes with ENOSPC, before the
# plugin sees them.
export PATTERN=$T/pattern
nbdsh -u "$uri" -c '
import errno, os
h.set_strict_mode(0)
size = h.get_size()
def refused(what, want, f, *args):
    try:
        f(*args)
    except nbd.Error as e:
        # nbd.Error.errno is the name ("EINVAL")
        assert e.errno == errno.errorcode[want], "%s: got %s, want %s: %s" % (
            what, e.errno, errno.errorcode[want], e.string)
        print("ok: %s -> %s" % (what, errno.errorcode[want]))
        return
    raise AssertionError("%s was accepted" % what)
wrap = 2**64 - 512                  # offset + 4096 overflows 64 bits
for what, off, n in (("past the end", size, 512),
                     ("straddling the end", size - 512, 1024),
                     ("overflowing 2^64", wrap, 4096),
                     ("of length 0", 0, 0),
                     ("of length 0 past the end", size + 1, 0)):
    refused("read " + what, errno.EINVAL, h.pread, n, off)
    refused("write " + what, errno.ENOSPC, h.pwrite, b"\xab" * n, off)
    refused("trim " + what, errno.EINVAL, h.trim, n, off)
    refused("zero " + what, errno.ENOSPC, h.zero, n, off)
    refused("block status " + what, errno.EINVAL, h.block_status, n, off,
            lambda *a: 0)
'
intact "out-of-range and zero-length requests"

# The plugin advertises a minimum block size of 1: unaligned requests are
# served, read-modify-write inside chunks and across stripes.  Then the
# largest request nbdkit takes, 64 MiB, unaligned as well.
nbdsh -u "$uri" -c '
import os
h.set_strict_mode(0)
assert h.get_block_size(nbd.SIZE_MINIMUM) == 1
pattern = bytearray(open(os.environ["PATTERN"], "rb").read())
def put(off, data):
    h.pwrite(data, off)
    pattern[off:off + len(data)] = data
chunk, stripe = 65536, 4 * 65536
for off, n in ((1, 1), (511, 3), (chunk - 7, 14), (stripe - 100, 5000),
               (3 * stripe + 12345, 2 * stripe + 77)):
    put(off, os.urandom(n))
    assert h.pread(n + 2, off - 1) == pattern[off - 1:off + n + 1], (off, n)
print("ok: unaligned writes and reads")
put(4097, os.urandom(64 * 1024 * 1024))
assert h.pread(64 * 1024 * 1024, 4097) == pattern[4097:4097 + 64 * 1024 * 1024]
print("ok: a 64 MiB write and read at an unaligned offset")
h.flush()
open(os.environ["PATTERN"], "wb").write(pattern)
'
intact "unaligned and 64 MiB requests"

# What libnbd will not send: requests over 64 MiB (ENOMEM), an unknown
# command (EINVAL), a bad magic and unskippable payloads (disconnected),
# a write whose client hangs up mid-payload (nothing written).
"${hostile[@]}" raw "$sock" "$T/pattern"
intact "raw protocol abuse"

# Trim and zero carry no payload: nbdkit lets them past 64 MiB.
nbdsh -u "$uri" -c '
import os
h.set_strict_mode(0)
pattern = bytearray(open(os.environ["PATTERN"], "rb").read())
mib = 1024 * 1024
h.trim(65 * mib + 1, 5)
pattern[5:65 * mib + 6] = bytes(65 * mib + 1)
assert h.pread(mib, 30 * mib) == bytes(mib)
new = os.urandom(mib)
h.pwrite(new, 10 * mib)
h.zero(66 * mib, mib + 3, nbd.CMD_FLAG_FUA)
pattern[mib + 3:67 * mib + 3] = bytes(66 * mib)
assert h.pread(mib, 10 * mib) == bytes(mib)
print("ok: a 65 MiB trim and a 66 MiB zero, unaligned")
open(os.environ["PATTERN"], "wb").write(pattern)
'
intact "trims and zeroes over 64 MiB"

# Floods, bounded in time: 200 clients at once, then a client served
# while 200 connections sit in the handshake.
timeout 60 "${hostile[@]}" flood "$sock" "$T/pattern" 200 50 ||
  die "the flood was not served in time"
kill -0 "$server_pid" || die "nbdkit died in the flood"
timeout 30 "${hostile[@]}" idle "$sock" "$T/pattern" 200 ||
  die "not served beside idle connections"
intact "connection floods"
stop_server
check_members_hold "$T/pattern"
echo "ok: the members hold the data, every stripe's P and Q right"

# nbdkit's limit filter: with limit=3 the fourth client is refused.
nbdkit_opts=(--filter=limit)
start_server "$conf" limit=3
timeout 30 "${hostile[@]}" hold "$sock" 3 || die "the limit filter did not hold"
grep -q "limit: too many clients connected, connection rejected" \
  "$T/nbdkit.log" || die "nbdkit logged no refusal"
stop_server

# Every complaint in the log is nbdkit's about the protocol: the plugin
# itself (members, parity, superblocks) logged no error.
protocol='invalid request|limit: too many clients|too large to skip'
protocol+='|read data: NBD_CMD_WRITE|client flags|handshake'   # hang-ups
if grep error "$T/nbdkit.log" | grep -Ev "$protocol" | grep .; then
  die "errors beyond nbdkit's protocol checks"
fi
echo "ok: only nbdkit's protocol checks logged errors"
