#!/usr/bin/env bash
# nbdraid grow --size max on a running RAID1, RAID5, RAID6 and RAID10
# after every member file was made bigger, while a writer keeps
# rewriting the data: the new space is resynced (old bytes left on the
# bigger members are made consistent: check finds no mismatch), a new
# connection sees the new size, every old byte reads back, the new
# space takes data, the members match md's layout for the new size
# (md-model.py reads it from the superblocks), and mdadm --examine
# shows the new Used Dev Size; a spare left small is named in the log
# as too small to take a role.  The RAID5's data starts 12K into its
# members (as an md array made with a small --data-offset may), so its
# bitmap of 4K chunks has 4K of room: at the new size its chunk must
# double (md_bitmap_resize).
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires nbdsh

# grow_one NAME LEVEL LAYOUT CHUNK N DATA-MEMBERS [small]: 34M members
# grown to 80M; with small, the data 12K into them, a 4K bitmap chunk,
# and grown to 200M (more than the 120M its 30720 bits cover).
grow_one () {
  local name=$1 level=$2 layout=$3 chunk=$4 n=$5 data=$6 small=${7-}
  local size new out writer m used want round offset=$((1024 * 1024)) grown=80

  make_members "$T/$name" "$n" 34M
  # shellcheck disable=SC2046
  write_config "$T/$name/a.conf" "$level" "$layout" "$chunk" \
    $(member_paths "$T/$name" "$n")
  [ -z "$small" ] || sed -i "/^\[array\]/a bitmap-chunk = 4K" "$T/$name/a.conf"
  # The RAID1 has a spare that stays small: it can take no role after.
  if [ "$level" = 1 ]; then
    truncate -s 34M "$T/$name/s0.img"
    echo "spare = $T/$name/s0.img" >> "$T/$name/a.conf"
  fi
  "$NBDRAID" create --assume-clean "$T/$name/a.conf" 2>> "$T/create.log" ||
    die "$name: create failed: $(tail -1 "$T/create.log")"
  conf=$T/$name/a.conf
  members=$(member_paths "$T/$name" "$n")
  if [ -n "$small" ]; then        # all zeros still: nothing moves
    offset=$((12 * 1024)) grown=200
    for m in $members; do
      /usr/bin/python3 "$abs_top_srcdir/client-tests/sb-edit.py" "$m" 128 Q 24
      /usr/bin/python3 "$abs_top_srcdir/client-tests/sb-edit.py" "$m" 136 Q $(( (34 * M - offset) / 512 ))
    done
  fi
  if [ "$chunk" = - ]; then round=$((64 * 1024)); else round=$(( ${chunk%K} * 1024 )); fi
  used=$(( (grown * M - offset) / round * round ))
  want=$((data * used))
  start_server "$conf"
  size=$(export_size)
  random_file "$T/data" "$size"
  nbdcopy --flush "$T/data" "$uri"

  # Bigger members, with old bytes in the new space of two of them
  # that the resync must make consistent.
  for m in $members; do truncate -s "${grown}M" "$m"; done
  head -c 2M /dev/urandom | dd of="$T/$name/d0.img" bs=1M seek=50 conv=notrunc status=none
  head -c 2M /dev/urandom | dd of="$T/$name/d1.img" bs=1M seek=70 conv=notrunc status=none

  # The writer rewrites the same data over and over meanwhile.
  rm -f "$T/stop"
  ( while [ ! -e "$T/stop" ]; do nbdcopy "$T/data" "$uri" || exit 1; done ) &
  writer=$!
  sleep 0.5
  out=$("$NBDRAID" grow "$conf" --size max) || die "$name: grow refused: $out"
  echo "$name: $out"
  "$NBDRAID" wait "$conf" > /dev/null || die "$name: wait failed"
  touch "$T/stop"
  wait "$writer" || die "$name: the writer failed during the grow"
  wait_status 30 "j['synced'] and j['job']['kind'] == 'idle'"
  [ "$(last_work_bytes)" -gt 0 ] || die "$name: the new space was not resynced"
  [ "$level" != 1 ] || grep -q "array test: spare $T/$name/s0.img is too small for it now" "$T/nbdkit.log" ||
    die "$name: no warning about the spare left too small"

  new=$(export_size)
  [ "$new" = "$want" ] || die "$name: a new connection sees $new bytes, not $want"
  [ -z "$small" ] || status_is "j['bitmap']['chunk_bytes'] == 8192" ||
    die "$name: the bitmap chunk did not double: $(status_json)"
  "$NBDRAID" check "$conf" > /dev/null || die "$name: check refused"
  wait_status 60 "j['job']['kind'] == 'idle'"
  status_is "j['mismatches'] == 0" || die "$name: mismatches after the resync: $(status_json)"

  nbdcopy "$uri" "$T/out"
  cmp -n "$size" "$T/data" "$T/out" || die "$name: old data changed"
  random_file "$T/tail" $((new - size))
  cat "$T/data" "$T/tail" > "$T/all"
  nbdcopy --flush "$T/all" "$uri"
  nbdcopy "$uri" "$T/out"
  cmp "$T/all" "$T/out" || die "$name: the new space does not read back"
  stop_server
  check_members_hold "$T/all"
  if command -v mdadm > /dev/null; then
    mdadm --examine "$T/$name/d0.img" > "$T/examine" 2>&1 || die "$name: mdadm --examine failed: $(cat "$T/examine")"
    # mdadm leaves Used Dev Size out when it is all of Avail Dev Size.
    grep -qE "(Used Dev Size|Avail Dev Size) : $((used / 512)) " "$T/examine" &&
      ! grep -v "Used Dev Size : $((used / 512)) " "$T/examine" | grep -q "Used Dev Size" &&
      grep -q "Array Size : $((want / 1024)) KiB" "$T/examine" ||
      die "$name: mdadm does not see $((used / 512)) sectors of each member: $(grep Size "$T/examine")"
  fi
  rm -f "$T/data" "$T/out" "$T/all" "$T/tail" "$T/model.img"
  echo "ok: $name grew from $size to $new bytes under a writer"
}

M=$((1024 * 1024))
grow_one r1 1 - - 2 1
grow_one r5 5 left-symmetric 64K 3 2 small
grow_one r6 6 left-symmetric 64K 4 2
grow_one r10 10 n2 64K 4 2
