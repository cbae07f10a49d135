#!/usr/bin/env bash
# A member whose writes start failing in the middle of a client's writes
# (nbdkit's error filter with a trigger file) is failed: the client sees
# no error, the other members' superblocks record it as faulty, and
# every byte reads back right, then and after a restart.  A RAID5 with
# a partial parity log too: the failing member's log writes fail first.
. "$(dirname "$0")/lib.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"

RANDOM_IO="/usr/bin/python3 $abs_top_srcdir/client-tests/random-io.py"
error_filter=(--filter=error -- error=EIO error-pwrite-rate=100%
              error-zero-rate=100% error-trim-rate=100%
              error-file="$T/trigger")

for spec in "r5 5 left-symmetric 16K 4 2" "r6 6 right-asymmetric 16K 5 4" \
            "r10 10 f2 16K 4 1" "r1 1 - - 2 0" \
            "r5ppl 5 left-symmetric 16K 4 1 ppl"; do
  set -- $spec
  name=$1 bad=$6
  nbd_array "$name" "$2" "$3" "$4" "$5" 4M
  if [ "${7-}" = ppl ]; then
    sed -i '/^\[array\]/a consistency-policy = ppl' "$conf"
    "$NBDRAID" create --force "$conf" 2>> "$T/create.log" ||
      die "$name: create: $(tail -1 "$T/create.log")"
  fi
  # Put member $bad behind the error filter, at the same socket.
  kill_member "$name-$bad"
  start_member "$name-$bad" "$T/$name/d$bad.img" "${error_filter[@]}"
  # (the previous array's trigger must not fail this one from its start)
  rm -f "$T/trigger"
  start_server "$conf"
  $RANDOM_IO "$uri" 300 7 --touch-after 100 "$T/trigger" \
    --save "$T/$name.expect" || die "$name: the client saw an error"
  grep -q "member $bad (nbd+unix:///?socket=$T/$name-$bad.sock) failed: " \
    "$T/nbdkit.log" ||
    die "$name: member $bad was not failed: $(tail -5 "$T/nbdkit.log")"
  stop_server
  for ((i = 0; i < $5; i++)); do
    [ "$i" = "$bad" ] && continue
    state=$("$NBDRAID" examine --json "$T/$name/d$i.img" |
            sed -n 's/.*"array_state": "\([^"]*\)".*/\1/p')
    [ "${state:$bad:1}" = . ] || die "$name: d$i does not record $bad faulty: $state"
  done
  # Restart: the failure is on record, the array starts degraded.
  start_server "$conf"
  nbdcopy "$uri" "$T/$name.out"
  cmp "$T/$name.expect" "$T/$name.out" || die "$name: data lost"
  stop_server
  echo "ok: $name survives member $bad's write errors"
done
