#!/usr/bin/env bash
# Read errors are repaired the md way: while one member fails every read
# (error filter with a trigger), the client still reads the right bytes
# with no error, the failed ranges are rewritten on that member from the
# others, the member stays in the array, and its superblock counts the
# corrected reads.  Afterwards the members hold md's layout exactly.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

for spec in "r5 5 left-symmetric 16K 4 1" "r6 6 left-asymmetric 16K 5 3" \
            "r1 1 - - 2 1" "r10 10 n2 16K 4 2"; do
  set -- $spec
  name=$1 n=$5 bad=$6
  nbd_array "$name" "$2" "$3" "$4" "$n" 4M
  kill_member "$name-$bad"
  start_member "$name-$bad" "$T/$name/d$bad.img" --filter=error -- \
    error=EIO error-pread-rate=100% error-file="$T/trigger"
  start_server "$conf"
  random_file "$T/$name.data" "$(export_size)"
  nbdcopy "$T/$name.data" "$uri"
  touch "$T/trigger"
  nbdcopy "$uri" "$T/$name.out"
  cmp "$T/$name.data" "$T/$name.out" || die "$name: wrong bytes under read errors"
  rm "$T/trigger"
  grep -q "member $bad .*read error at [0-9]* corrected" "$T/nbdkit.log" ||
    die "$name: no corrected read logged"
  grep -q "member $bad .* failed" "$T/nbdkit.log" && die "$name: member $bad was failed"
  stop_server
  corrected=$("$NBDRAID" examine --json "$T/$name/d$bad.img" |
              sed -n 's/.*"corrected_reads": \([0-9]*\).*/\1/p')
  [ "${corrected:-0}" -gt 0 ] || die "$name: corrected_reads is ${corrected:-unset}"
  check_members_hold "$T/$name.data"
  echo "ok: $name repaired $corrected reads on member $bad"
  rm -f "$T/nbdkit.log"
done
