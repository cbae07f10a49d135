#!/usr/bin/env bash
# A member of each redundant level fails (its server killed) under a
# running fio --verify job: the spare takes over by itself, the rebuild
# finishes, fio sees no error, and the rebuilt member holds exactly what
# md's layout says it must.  The log says the failure as an error and
# the recovery as the routine it is ("info:", not "error:").
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires fio
fio --enghelp 2>/dev/null | grep -qw nbd || skip "fio has no nbd engine"

create_opts=(--assume-clean)    # fresh sparse members: consistent zeros
nbd_spares=1

# allocated KiB of a file
allocated () { du -k "$1" | cut -f1; }

rebuild_case () {
  local name=$1 level=$2 layout=$3 n=$5 victim=$6 fio_pid
  nbd_array "$name" "$level" "$layout" "$4" "$n" 12M
  start_server "$conf"
  fio --name="$name" --ioengine=nbd --uri="$uri" --rw=randwrite --bs=16k \
    --iodepth=8 --size="$(export_size)" --verify=crc32c --verify_state_save=0 --do_verify=1 \
    --verify_fatal=1 --rate_iops=800 --output="$T/$name.fio" \
    > /dev/null 2>&1 &
  fio_pid=$!
  cleanup_fn "kill $fio_pid 2>/dev/null"
  wait_for 30 sh -c "[ \$(du -k '$T/$name/d0.img' | cut -f1) -gt 1500 ]" ||
    die "$name: fio wrote nothing"
  kill_member "$name-$victim"
  wait "$fio_pid" || { cat "$T/$name.fio"; die "$name: fio failed"; }
  grep -q "err= 0" "$T/$name.fio" || die "$name: fio errors"
  wait_status 60 "j['working'] == $n and j['job']['kind'] == 'idle'"
  status_is "j['devices'][$victim]['path'].endswith('$name-s0.sock')" ||
    die "$name: the spare is not in role $victim: $(status_json)"
  nbdcopy "$uri" "$T/$name.out"
  stop_server
  members=$(member_paths "$T/$name" "$n" "$victim" "$T/$name/s0.img")
  check_members_hold "$T/$name.out"
  # Each case fails a different role of the array "test".
  grep -q "^nbdkit: raid[^:]*: error: array test: member $victim .* failed" \
    "$T/nbdkit.log" || die "$name: the failure is not logged as an error"
  grep -q "^nbdkit: raid: info: array test: recovery of member $victim .* finished" \
    "$T/nbdkit.log" || die "$name: the recovery's end is not logged as info"
  if grep -E "error: array test: (spare .* takes the place|recovery .* finished)" \
       "$T/nbdkit.log"; then
    die "$name: routine events logged as errors"
  fi
  echo "ok: $name rebuilt member $victim onto the spare under fio"
}

rebuild_case r1 1 - - 2 0
rebuild_case r5 5 left-symmetric 64K 4 2
rebuild_case r6 6 right-asymmetric 32K 5 4
rebuild_case r10 10 f2 64K 4 1
