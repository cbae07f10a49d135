#!/usr/bin/env bash
# direct = true opens members with O_DIRECT (the flag is on every fd
# the server holds on a member, as /proc/PID/fdinfo shows it; without
# direct = true it is on none); unaligned client requests still work
# (bounce buffers) and the data is where md puts it.
. "$(dirname "$0")/lib.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

# O_DIRECT needs a filesystem that supports it (not tmpfs).
probe=$T/probe
dd if=/dev/zero of="$probe" bs=4096 count=1 oflag=direct 2>/dev/null ||
  skip "$T does not support O_DIRECT"

# The architecture's O_DIRECT bit (040000 octal on x86_64).
o_direct=$(/usr/bin/python3 -c 'import os; print(os.O_DIRECT)')

# open_modes FILE...: for each member file, "FILE: MODE..." with one
# MODE per fd the server (nbdkit.pid) holds on it: O_DIRECT or
# buffered, from the octal flags: line of /proc/PID/fdinfo/FD.
open_modes () {
  local pid f fd flags modes
  pid=$(cat "$T/nbdkit.pid")
  for f in "$@"; do
    f=$(realpath "$f")
    modes=
    for fd in /proc/"$pid"/fd/*; do
      [ "$(readlink "$fd")" = "$f" ] || continue
      flags=$(sed -n 's/^flags:[[:space:]]*//p' "/proc/$pid/fdinfo/${fd##*/}")
      if (( 8#$flags & o_direct )); then modes+=" O_DIRECT"
      else modes+=" buffered"; fi
    done
    echo "$f:${modes:- not open}"
  done
}

new_array dio 6 left-symmetric 16K 5 4M
plain_conf=$conf
echo "direct = true" > "$T/direct.conf"
sed '/^\[array\]/r '"$T/direct.conf" "$conf" > "$T/dio.conf"
conf=$T/dio.conf
start_server "$conf"
# shellcheck disable=SC2086
open_modes $members > "$T/modes"
grep -Ev ': O_DIRECT( O_DIRECT)*$' "$T/modes" &&
  die "direct = true: members not (only) open with O_DIRECT: $(cat "$T/modes")"
/usr/bin/python3 "$abs_top_srcdir/client-tests/random-io.py" "$uri" 200 42 \
  --save "$T/expect" || die "random I/O with O_DIRECT failed"
stop_server
check_members_hold "$T/expect"

# The same members without direct = true: no O_DIRECT.
conf=$plain_conf
start_server "$conf"
# shellcheck disable=SC2086
open_modes $members > "$T/modes"
grep -Ev ': buffered( buffered)*$' "$T/modes" &&
  die "without direct = true: members not (only) buffered: $(cat "$T/modes")"
stop_server
echo "ok: O_DIRECT members, and buffered ones without direct = true"
