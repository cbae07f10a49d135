#!/usr/bin/env bash
# direct = true opens members with O_DIRECT; unaligned client requests
# still work (bounce buffers) and the data is where md puts it.
. "$(dirname "$0")/lib.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

# O_DIRECT needs a filesystem that supports it (not tmpfs).
probe=$T/probe
dd if=/dev/zero of="$probe" bs=4096 count=1 oflag=direct 2>/dev/null ||
  skip "$T does not support O_DIRECT"

new_array dio 6 left-symmetric 16K 5 4M
echo "direct = true" > "$T/direct.conf"
sed '/^\[array\]/r '"$T/direct.conf" "$conf" > "$T/dio.conf"
conf=$T/dio.conf
start_server "$conf"
/usr/bin/python3 "$abs_top_srcdir/client-tests/random-io.py" "$uri" 200 42 \
  --save "$T/expect" || die "random I/O with O_DIRECT failed"
stop_server
check_members_hold "$T/expect"
echo "ok: O_DIRECT members"
