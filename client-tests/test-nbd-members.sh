#!/usr/bin/env bash
# Members that are NBD exports (nbd+unix:// URIs served by separate
# nbdkit processes): RAID5 and RAID10 round-trip through them, and the
# files behind the exports hold md's layout.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

for spec in "r5 5 left-symmetric 64K 4" "r10 10 n2 64K 4"; do
  set -- $spec
  nbd_array "$@" 8M
  start_server "$conf"
  random_file "$T/$1.data" "$(export_size)"
  nbdcopy --connections=4 "$T/$1.data" "$uri"
  nbdcopy "$uri" "$T/$1.out"
  cmp "$T/$1.data" "$T/$1.out" || die "$1: read back differs"
  stop_server
  check_members_hold "$T/$1.data"
  echo "ok: $1 over NBD members"
done
