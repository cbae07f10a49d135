#!/usr/bin/env bash
# Random unaligned, sub-chunk and stripe-spanning writes, zeroes and trims,
# several in flight at once, on every level: every byte reads back as
# written, and the members match md's layout with redundancy intact.
. "$(dirname "$0")/lib.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

check_random_io () {
  local name=$1 seed=$2
  shift 2
  new_array "$name" "$@"
  start_server "$conf"
  /usr/bin/python3 "$abs_top_srcdir/client-tests/random-io.py" "$uri" 300 \
    "$seed" --save "$T/$name.expect" || die "$name: random I/O failed"
  stop_server
  check_members_hold "$T/$name.expect"
  echo "ok: $name"
}

check_random_io r0 1 0 - 16K 3 4M
check_random_io r1 2 1 - - 3 4M
check_random_io r5-ls 3 5 left-symmetric 16K 4 4M
check_random_io r5-ra 4 5 right-asymmetric 8K 5 4M
check_random_io r6-ls 5 6 left-symmetric 16K 6 4M
check_random_io r6-la 6 6 left-asymmetric 4K 5 4M
check_random_io r6-wide 7 6 right-symmetric 4K 12 2M
check_random_io r10-n2 8 10 n2 16K 4 4M
check_random_io r10-f2 9 10 f2 8K 3 4M
check_random_io r10-o2 10 10 o2 16K 5 4M
