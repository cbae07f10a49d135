#!/usr/bin/env bash
# qemu's NBD client: qemu-img convert into the array and compare back,
# qemu-io pattern writes (sub-chunk, unaligned, stripe-spanning) read
# back through a fresh connection.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires qemu-img
requires qemu-io

new_array r6 6 left-symmetric 64K 5 8M
start_server "$conf"
random_file "$T/src.img" "$(export_size)"
qemu-img convert -n -f raw -O raw "$T/src.img" "$uri" || die "convert failed"
qemu-img compare -f raw -F raw "$T/src.img" "$uri" || die "compare differs"
echo "ok: qemu-img convert and compare"

qemu-io -f raw "$uri" \
  -c 'write -P 0xa1 0 4k' \
  -c 'write -P 0xb2 70000 200k' \
  -c 'write -P 0xc3 5000001 1' \
  -c 'write -P 0xd4 600k 3M' > "$T/qio.out" || die "qemu-io write failed"
qemu-io -f raw "$uri" \
  -c 'read -P 0xa1 0 4k' \
  -c 'read -P 0xb2 70000 200k' \
  -c 'read -P 0xc3 5000001 1' \
  -c 'read -P 0xd4 600k 3M' > "$T/qio.out" || die "qemu-io read failed: $(cat "$T/qio.out")"
grep -q 'Pattern verification failed' "$T/qio.out" && die "$(cat "$T/qio.out")"
stop_server
# The rest of the source survives around the patterns.
/usr/bin/python3 - "$T/src.img" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
for pat, off, n in ((0xa1, 0, 4096), (0xb2, 70000, 200 << 10),
                    (0xc3, 5000001, 1), (0xd4, 600 << 10, 3 << 20)):
    data[off:off + n] = bytes([pat]) * n
open(sys.argv[1], "wb").write(data)
PY
check_members_hold "$T/src.img"
echo "ok: qemu-io patterns and the members agree"
