# nbdraid client tests: a reshape under fio.  Source after lib.sh:
#   . "$abs_top_srcdir/client-tests/lib/reshape-under-fio.sh"
#   reshape_under_fio 6                      # onto one more member
#   reshape_under_fio 5 --chunk 128K         # or another chunk, layout

# reshape_under_fio LEVEL [--chunk SIZE | --layout NAME]: nbdraid grow
# on a running 4-member RAID LEVEL (5 or 6; 64K chunks, left-symmetric):
# --raid-devices 5 with a spare added, or the chunk or layout given:
# md's reshape without a backup file, each member's data moving back
# from its old data offset.  fio (crc32c verify) writes and checks the
# first half of the array throughout; the second half holds data
# written before, which must read back the same.  At the end the array
# holds one more data chunk a stripe (or as many), every superblock
# says the new shape at the new data offset, the config names it, check
# finds no mismatch, the array assembles again, and the members match
# md's layout (md-model.py) for the new shape.
reshape_under_fio () {
  local level=$1 option=${2:---raid-devices} value=${3:-5}
  local data_members=$(($1 == 5 ? 3 : 2)) n=4 grown
  local dir size half offset0 fio_pid out st new m offset members
  new_array r$level $level left-symmetric 64K 4 34M --assume-clean
  dir=$T/r$level
  # Slow enough that fio runs across most of it.
  array_option "speed-min = 4M" "speed-max = 4M"
  start_server "$conf"
  size=$(export_size)
  half=$((size / 2))
  grown=$size
  random_file "$T/data" "$size"
  nbdcopy --flush "$T/data" "$uri"
  offset0=$(mdadm --examine "$dir/d0.img" 2>/dev/null | sed -n 's/ *Data Offset : \([0-9]*\) sectors/\1/p')
  if [ "$option" = --raid-devices ]; then
    truncate -s 34M "$dir/d4.img"
    "$NBDRAID" add "$conf" "$dir/d4.img" > /dev/null || die "add refused"
    n=5
    grown=$((size / data_members * (data_members + 1)))
  fi

  fio_on_half "$half"
  out=$("$NBDRAID" grow "$conf" "$option" "$value") || die "grow refused: $out"
  echo "$out"
  wait_status 30 "j['job']['kind'] == 'reshape'" || die "no reshape runs: $(status_json)"
  st=$("$NBDRAID" status "$conf")
  grep -q 'reshape = ' <<< "$st" || die "status shows no reshape progress: $st"
  st=$("$NBDRAID" detail "$conf")
  grep -q 'State : .*reshaping' <<< "$st" && grep -q 'Reshape Status : ' <<< "$st" ||
    die "detail shows no reshape: $st"
  # As mdadm --detail: the shape it changes from, then what changes.
  case $option in
    --raid-devices) want='Delta Devices : 1, (4->5)' ;;
    --chunk) want="New Chunksize : $(($(numfmt --from=iec "$value") / 1024))K" ;;
    --layout) want="New Layout : $value" ;;
  esac
  grep -qF "$want" <<< "$st" && grep -q 'Chunk Size : 64K' <<< "$st" &&
    grep -q 'Layout : left-symmetric$' <<< "$st" || die "detail does not say '$want': $st"
  status_is "j['reshape_from'] == {'members': 4, 'layout': 'left-symmetric', 'chunk_bytes': 65536}" ||
    die "status does not say the shape the reshape changes from: $(status_json)"
  wait "$fio_pid" || { cat "$T/fio.out" >&2; die "fio verify failed across the reshape"; }
  "$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
  wait_status 60 "j['job']['kind'] == 'idle' and j['working'] == $n"
  grep -q "reshape finished: $n members" "$T/nbdkit.log" || die "no reshape finished in the log"
  new=$(export_size)
  [ "$new" = "$grown" ] || die "the array is $new bytes, not $grown"
  [ "$(grep -c '^member = ' "$conf")" = $n ] && ! grep -q '^spare' "$conf" ||
    die "the config does not list $n members: $(cat "$conf")"
  case $option in
    --chunk) grep -q "^chunk = $value\$" "$conf" || die "the config's chunk is not $value: $(cat "$conf")" ;;
    --layout) grep -q "^layout = $value\$" "$conf" || die "the config's layout is not $value: $(cat "$conf")" ;;
  esac
  "$NBDRAID" check "$conf" > /dev/null || die "check refused"
  wait_status 60 "j['job']['kind'] == 'idle'"
  status_is "j['mismatches'] == 0" || die "mismatches after the reshape: $(status_json)"
  reshaped_holds "$size" "$new" "$half" "$dir" "$n"
  if command -v mdadm > /dev/null; then
    for m in $members; do
      mdadm --examine "$m" > "$T/examine" 2>&1
      grep -q "Raid Devices : $n" "$T/examine" && ! grep -q "Reshape" "$T/examine" ||
        die "mdadm --examine $m: $(cat "$T/examine")"
      case $option in
        --chunk) grep -q "Chunk Size : $(($(numfmt --from=iec "$value") / 1024))K" "$T/examine" ||
          die "mdadm --examine $m: the chunk is not $value: $(cat "$T/examine")" ;;
        --layout) grep -q "Layout : $value\$" "$T/examine" ||
          die "mdadm --examine $m: the layout is not $value: $(cat "$T/examine")" ;;
      esac
      offset=$(sed -n 's/ *Data Offset : \([0-9]*\) sectors/\1/p' "$T/examine")
      [ "$offset" -lt "$offset0" ] ||
        die "$m: data offset $offset did not move back from $offset0"
    done
  fi
  rm -f "$T/data" "$T/out" "$T/out2" "$T/model.img"
  echo "ok: RAID$level grow $option $value under fio, $size -> $new bytes"
}

# reshaped_holds SIZE NEW HALF DIR N: after a reshape from SIZE to NEW
# bytes of the array served at $uri, whose bytes from HALF on are
# $T/data's: they still are, the new space reads as zeros, the array
# assembles again with the same bytes (in $T/out), and the N members
# in DIR match md's layout (md-model.py).  The server is stopped.
reshaped_holds () {
  local size=$1 new=$2 half=$3 dir=$4 n=$5
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
  members=$(member_paths "$dir" "$n")
  check_members_hold "$T/out"
}

# fio_on_half HALF: fio (crc32c verify) writes and checks the array's
# first HALF bytes at $uri, twice, in the background (fio_pid; its
# output in $T/fio.out).
fio_on_half () {
  fio --name=reshape --ioengine=nbd --uri="$uri" --rw=randwrite \
    --bsrange=4k-64k --iodepth=16 --size="$1" --loops=2 \
    --verify=crc32c --verify_state_save=0 --do_verify=1 --verify_fatal=1 \
    --randrepeat=0 --output="$T/fio.out" > /dev/null 2>&1 &
  fio_pid=$!
  sleep 0.5
}

# crash_mid_reshape: kill -9 the server while its reshape runs, start
# it again: the reshape resumes where the superblocks say, and runs to
# its end unthrottled.
crash_mid_reshape () {
  status_is "j['job']['kind'] == 'reshape'" || die "the reshape ended before the crash"
  crash_server
  start_server "$conf"
  grep -q "resumes at new stripe" "$T/nbdkit.log" || die "the reshape did not resume"
  "$NBDRAID" speed-limit "$conf" 0 0 > /dev/null
  "$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
}
