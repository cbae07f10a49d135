#!/usr/bin/env bash
# An nbdkit sh plugin script: the file $JITTER_FILE as an export whose
# every read and write first sleeps a random 0 to $JITTER_MS (default
# 8) milliseconds, so that requests in flight complete out of order.
# nbdkit's delay filter sleeps a fixed time (in the order requests
# came, on each connection).
#   JITTER_FILE=d0.img nbdkit -U SOCK sh client-tests/jittery-member.sh
f=$JITTER_FILE

jitter () {
  sleep "0.$(printf %03d $((RANDOM % ${JITTER_MS:-8})))"
}

case "$1" in
  thread_model) echo parallel ;;
  get_size) stat -L -c %s "$f" ;;
  can_write | can_flush | can_multi_conn) exit 0 ;;
  pread)
    jitter
    dd if="$f" skip="$4" count="$3" iflag=skip_bytes,count_bytes \
      status=none ;;
  pwrite)
    jitter
    dd of="$f" seek="$4" oflag=seek_bytes conv=notrunc status=none ;;
  flush) exit 0 ;;
  *) exit 2 ;;
esac
