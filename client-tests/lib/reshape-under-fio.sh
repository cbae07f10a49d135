# nbdraid client tests: a reshape onto one more member under fio.
# Source after lib.sh:
#   . "$abs_top_srcdir/client-tests/lib/reshape-under-fio.sh"
#   reshape_under_fio 6

# reshape_under_fio LEVEL: nbdraid grow --raid-devices 5 on a running
# 4-member RAID LEVEL (5 or 6) with a spare added: md's reshape without
# a backup file, each member's data moving back from its old data
# offset.  fio (crc32c verify) writes and checks the first half of the
# array throughout; the second half holds data written before, which
# must read back the same.  At the end the array holds one more data
# chunk a stripe, every superblock says 5 members at the new data
# offset, the config lists five members, check finds no mismatch, the
# array assembles again, and the members match md's layout
# (md-model.py) for 5 members.
reshape_under_fio () {
  local level=$1 data_members=$(($1 == 5 ? 3 : 2))
  local dir size half offset0 fio_pid out st new m offset members
  new_array r$level $level left-symmetric 64K 4 34M --assume-clean
  dir=$T/r$level
  truncate -s 34M "$dir/d4.img"
  # Slow enough that fio runs across most of it.
  printf 'speed-min = 4M\nspeed-max = 4M\n' > "$T/speed"
  sed -i "/^\[array\]/r $T/speed" "$conf"
  start_server "$conf"
  size=$(export_size)
  half=$((size / 2))
  random_file "$T/data" "$size"
  nbdcopy --flush "$T/data" "$uri"
  offset0=$(mdadm --examine "$dir/d0.img" 2>/dev/null | sed -n 's/ *Data Offset : \([0-9]*\) sectors/\1/p')
  "$NBDRAID" add "$conf" "$dir/d4.img" > /dev/null || die "add refused"

  fio --name=reshape --ioengine=nbd --uri="$uri" --rw=randwrite \
    --bsrange=4k-64k --iodepth=16 --size="$half" --loops=2 \
    --verify=crc32c --verify_state_save=0 --do_verify=1 --verify_fatal=1 \
    --randrepeat=0 --output="$T/fio.out" > /dev/null 2>&1 &
  fio_pid=$!
  sleep 0.5
  out=$("$NBDRAID" grow "$conf" --raid-devices 5) || die "grow refused: $out"
  echo "$out"
  wait_status 30 "j['job']['kind'] == 'reshape'" || die "no reshape runs: $(status_json)"
  st=$("$NBDRAID" status "$conf")
  grep -q 'reshape = ' <<< "$st" || die "status shows no reshape progress: $st"
  st=$("$NBDRAID" detail "$conf")
  grep -q 'State : .*reshaping' <<< "$st" && grep -q 'Reshape Status : ' <<< "$st" ||
    die "detail shows no reshape: $st"
  wait "$fio_pid" || { cat "$T/fio.out" >&2; die "fio verify failed across the reshape"; }
  "$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
  wait_status 60 "j['job']['kind'] == 'idle' and j['working'] == 5"
  grep -q "reshape finished: 5 members" "$T/nbdkit.log" || die "no reshape finished in the log"
  new=$(export_size)
  [ "$new" = $((size / data_members * (data_members + 1))) ] ||
    die "the array is $new bytes, not $((size / data_members * (data_members + 1)))"
  [ "$(grep -c '^member = ' "$conf")" = 5 ] && ! grep -q '^spare' "$conf" ||
    die "the config does not list five members: $(cat "$conf")"
  "$NBDRAID" check "$conf" > /dev/null || die "check refused"
  wait_status 60 "j['job']['kind'] == 'idle'"
  status_is "j['mismatches'] == 0" || die "mismatches after the reshape: $(status_json)"
  nbdcopy "$uri" "$T/out"
  cmp -n "$((size - half))" -i "$half:$half" "$T/data" "$T/out" ||
    die "the data written before the reshape differs after it"
  cmp -n "$((new - size))" -i "$size:$size" "$T/out" /dev/zero ||
    die "the new space does not read as zeros"
  stop_server

  start_server "$conf"
  [ "$(export_size)" = "$new" ] || die "reassembled at $(export_size) bytes, not $new"
  nbdcopy "$uri" "$T/out2"
  cmp "$T/out" "$T/out2" || die "data differs after a restart"
  stop_server
  members="$dir/d0.img $dir/d1.img $dir/d2.img $dir/d3.img $dir/d4.img"
  check_members_hold "$T/out"
  if command -v mdadm > /dev/null; then
    for m in $members; do
      mdadm --examine "$m" > "$T/examine" 2>&1
      grep -q "Raid Devices : 5" "$T/examine" && ! grep -q "Reshape" "$T/examine" ||
        die "mdadm --examine $m: $(cat "$T/examine")"
      offset=$(sed -n 's/ *Data Offset : \([0-9]*\) sectors/\1/p' "$T/examine")
      [ "$offset" -lt "$offset0" ] ||
        die "$m: data offset $offset did not move back from $offset0"
    done
  fi
  rm -f "$T/data" "$T/out" "$T/out2" "$T/model.img"
  echo "ok: RAID$level 4 -> 5 members under fio, $size -> $new bytes"
}
