#!/usr/bin/env bash
# Member files that fallocate reserved on tmpfs: their unwritten ranges
# are holes (SEEK_DATA passes them), but finding where one ends walks
# every page of it, milliseconds a gigabyte.  Asked again for each unit
# of a map or each piece of a rebuild, that made `nbdinfo --map` of a
# 4 GiB RAID6 take minutes and its rebuild crawl at 30 MB/s.  A member
# keeps its last answer until a write overlaps it, so here the server's
# SEEK_DATA calls (counted with strace) must be a handful per member for
# a whole map, not one per unit; and, since an answer is kept, a write
# into a hole the map saw must turn up as data in the next map, and a
# rebuild onto a spare full of 0xff bytes must leave the members holding
# exactly md's layout of what was written (the model).  A RAID5 created
# without --assume-clean resyncs over the same members, as md would.
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && export TMPDIR=/dev/shm
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh
requires nbdcopy
requires nbdinfo
requires strace
requires fallocate
[ "$(stat -f -c %T "$T")" = tmpfs ] || skip "no tmpfs at /dev/shm"

# lseeks CMD...: run CMD with strace on the server; sets $seeks to the
# number of SEEK_DATA calls the server made meanwhile
lseeks () {
  strace -f -e trace=lseek -o "$T/strace.out" -p "$(cat "$T/nbdkit.pid")" \
    2> "$T/strace.err" &
  local tracer=$!
  wait_for 10 grep -qs attached "$T/strace.err" ||
    die "strace did not attach: $(cat "$T/strace.err")"
  "$@"
  kill -INT "$tracer"
  wait "$tracer" || :
  seeks=$(grep -c SEEK_DATA "$T/strace.out" || :)
}

# fallocated_array NAME LEVEL LAYOUT CHUNK N [create options]: like
# new_array, the members fallocated instead of sparse
fallocated_array () {
  local name=$1 level=$2 layout=$3 chunk=$4 n=$5 i
  shift 5
  mkdir -p "$T/$name"
  for ((i = 0; i < n; i++)); do
    fallocate -l 32M "$T/$name/d$i.img"
  done
  # shellcheck disable=SC2046
  write_config "$T/$name/a.conf" "$level" "$layout" "$chunk" \
    $(member_paths "$T/$name" "$n")
  conf=$T/$name/a.conf
  "$NBDRAID" create "$@" "$conf" 2>> "$T/create.log" ||
    { cat "$T/create.log" >&2; die "$name: nbdraid create failed"; }
  members=$(member_paths "$T/$name" "$n")
}

fallocated_case () {
  local name=$1 level=$2 layout=$3 chunk=$4 n=$5 victim=$6 size
  fallocated_array "$1" "$2" "$3" "$4" "$5" --assume-clean
  start_server "$conf"
  size=$(export_size)
  lseeks check_map "$name" "$size"
  [ "$seeks" -le $((4 * n)) ] ||
    die "$name: one map of the empty volume took $seeks SEEK_DATA calls"
  echo "ok: $name: the map of the empty volume took $seeks SEEK_DATA calls"
  # The members' answers are kept: holes to their ends.  Writes into
  # them must count.
  truncate -s "$size" "$T/$name.data"
  local at=(0 $((size / 2 + 12345)))
  for a in "${at[@]}"; do write_piece "$T/$name.data" "$a"; done
  check_map "$name" "$size" "${at[@]}"
  head -c 32M /dev/zero | tr '\0' '\377' > "$T/$name/s0.img"
  "$NBDRAID" fail "$conf" "$victim" > /dev/null || die "$name: fail refused"
  lseeks rebuild "$name" "$n"
  nbdcopy "$uri" "$T/$name.out"
  stop_server
  cmp "$T/$name.data" "$T/$name.out" || die "$name: the volume differs"
  members=$(member_paths "$T/$name" "$n" "$victim" "$T/$name/s0.img")
  check_members_hold "$T/$name.out"
  echo "ok: $name: member $victim rebuilt, $seeks SEEK_DATA calls"
}

rebuild () {
  "$NBDRAID" add "$conf" "$T/$1/s0.img" > /dev/null || die "$1: add refused"
  wait_status 60 "j['working'] == $2 and j['job']['kind'] == 'idle'"
}

resync () {
  "$NBDRAID" speed-limit "$conf" 1000000 0 > /dev/null
  wait_status 60 "j['job']['kind'] == 'idle'"
}

fallocated_case r6 6 left-symmetric 64K 5 1
fallocated_case r1 1 - - 2 0

# The initial resync passes stripes that are holes on every member by.
# md's crawl (speed-max) holds it until strace is on the server.
fallocated_array r5 5 left-symmetric 64K 4
sed -i 's/^\[array\]$/&\nspeed-max = 64K/' "$conf"
start_server "$conf"
lseeks resync
nbdcopy "$uri" "$T/r5.out"
stop_server
cmp "$T/r5.out" <(head -c "$(stat -c %s "$T/r5.out")" /dev/zero) ||
  die "r5: the resynced volume does not read as zeros"
check_members_hold "$T/r5.out"
[ "$seeks" -le 64 ] ||
  die "r5: the resync of empty members took $seeks SEEK_DATA calls"
echo "ok: r5: the initial resync took $seeks SEEK_DATA calls"
