#!/usr/bin/env bash
# check reads every stripe and counts mismatched sectors (md's
# mismatch_cnt): 0 on a clean array; bytes of parity (RAID6) or of a
# mirror copy (RAID1) flipped in a member file are found, a 4K page
# (8 sectors) each, wherever the check's workers take them; repair
# rewrites them; check is 0 again, and the members hold md's layout.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

# flip FILE OFFSET: invert one byte in place
flip () {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1)
    f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0xff]))
PY
}

# run_check VERB: start it, wait for it, print the mismatch count
run_check () {
  "$NBDRAID" "$1" "$conf" > /dev/null || die "$1 refused"
  wait_status 60 "j['job']['kind'] == 'idle'"
  status_json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["mismatches"])'
}

check_case () {
  local name=$1 victim=$2
  shift 2
  new_array "$name" "$@" --assume-clean
  start_server "$conf"
  random_file "$T/$name.data" "$(export_size)"
  nbdcopy "$T/$name.data" "$uri"
  [ "$(run_check check)" = 0 ] || die "$name: a clean array has mismatches"
  # Data starts 1 MiB into these small members.  At 64K chunks on 5
  # members the victim holds the same block every fifth stripe: stripes
  # 0, 40 and 80, in pieces of the check far apart.
  for stripe in 0 40 80; do
    flip "$T/$name/d$victim.img" $((1048576 + stripe * 65536 + 5000))
  done
  found=$(run_check check)
  [ "$found" = 24 ] || die "$name: check found $found sectors, not 24"
  [ "$(run_check repair)" = 24 ] || die "$name: repair did not find 24"
  [ "$(run_check check)" = 0 ] || die "$name: still mismatched after repair"
  nbdcopy "$uri" "$T/$name.out"
  cmp "$T/$name.data" "$T/$name.out" || die "$name: data changed"
  stop_server
  check_members_hold "$T/$name.data"
  echo "ok: $name: check found $found mismatched sectors, repair fixed them"
}

# RAID6 left-symmetric on 5: stripe 0 has P on member 4, Q on member 0.
check_case r6 4 6 left-symmetric 64K 5 8M
check_case r6q 0 6 left-symmetric 64K 5 8M
# RAID1: the second copy.
check_case r1 1 1 - - 2 8M
