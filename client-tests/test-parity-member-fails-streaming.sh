#!/usr/bin/env bash
# A member that starts failing every request while a stream of parity
# writes is in flight on it: members answer after 20 ms (nbdkit's
# delay filter) and fio keeps 16 writes in flight at 16 MB/s, so a
# member has writes of gathered stripes and joined member I/O
# outstanding when its error filter's
# trigger file appears (RAID5: one member; RAID6: two, one after the
# other).  fio's writes of 40K (parts of stripes gathered across
# requests) and 192K (whole stripes) must all succeed and verify, the
# member must be failed, and what was written and flushed before must
# read back unchanged.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires fio
fio --enghelp 2>/dev/null | grep -qw nbd || skip "fio has no nbd engine"

# stream NAME BS: fio writes BS blocks over the export's second half at
# 16 MB/s (a second), then reads them back and verifies them.
stream () {
  local half=$(($(export_size) / 2))
  fio --name="$1" --ioengine=nbd --uri="$uri" --rw=write --bs="$2" \
    --iodepth=16 --offset="$half" --size="$half" --rate=16m \
    --verify=crc32c --verify_state_save=0 --do_verify=1 --verify_fatal=1 \
    --output="$T/$1.fio" > /dev/null 2>&1
}

# failed NAME M: the server's log says member M failed.
failed () {
  grep -q "member $2 (nbd+unix:///?socket=$T/$1-$2.sock) failed: " \
    "$T/nbdkit.log"
}

for spec in "r5 5 5 2" "r6 6 6 1 4"; do
  for bs in 40K 192K; do
    set -- $spec
    name=$1-$bs level=$2 n=$3
    shift 3
    bad=("$@")
    make_members "$T/$name" "$n" 8M
    uris=()
    for ((i = 0; i < n; i++)); do
      start_member "$name-$i" "$T/$name/d$i.img" --filter=error \
        --filter=delay -- rdelay=20ms wdelay=20ms error=EIO error-rate=100% \
        error-file="$T/$name-$i.fail"
      uris+=("$member_uri")
    done
    write_config "$T/$name/a.conf" "$level" - 16K "${uris[@]}"
    sed -i '/^\[array\]/a bitmap = none\nnbd-timeout = 5' "$T/$name/a.conf"
    "$NBDRAID" create --assume-clean "$T/$name/a.conf" \
      2>> "$T/create.log" ||
      { cat "$T/create.log" >&2; die "nbdraid create $name failed"; }
    conf=$T/$name/a.conf
    start_server "$conf"
    half=$(($(export_size) / 2))
    random_file "$T/$name.first" "$half"
    nbdcopy --flush "$T/$name.first" "$uri"

    stream "$name" "$bs" &
    fio_pid=$!
    for m in "${bad[@]}"; do
      sleep 0.3                 # the stream is at full speed
      touch "$T/$name-$m.fail"
      wait_for 20 failed "$name" "$m" ||
        die "$name: member $m was not failed: $(tail -3 "$T/nbdkit.log")"
    done
    wait "$fio_pid" ||
      { cat "$T/$name.fio" >&2; die "$name: fio failed"; }
    grep -q "err= 0" "$T/$name.fio" || die "$name: fio reported errors"
    nbdcopy "$uri" "$T/$name.out"
    cmp -n "$half" "$T/$name.first" "$T/$name.out" ||
      die "$name: the flushed first half changed"
    stop_server
    for ((i = 0; i < n; i++)); do kill_member "$name-$i"; done
    rm -f "$T/$name"/*.img "$T/$name.first" "$T/$name.out"
    echo "ok: RAID$level, ${#bad[@]} member(s) failed under $bs writes"
  done
done
