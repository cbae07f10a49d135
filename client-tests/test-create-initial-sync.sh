#!/usr/bin/env bash
# nbdraid create without --assume-clean returns at once and the server
# makes every stripe consistent in the background, even when the members
# start full of garbage, serving the data written meanwhile correctly,
# and then marks the array clean; with --assume-clean the garbage stays.
. "$(dirname "$0")/lib.sh"

sync_case () {
  local name=$1 level=$2 layout=$3 chunk=$4 n=$5 d=$T/$1 i
  mkdir -p "$d"
  for ((i = 0; i < n; i++)); do head -c 6M /dev/urandom > "$d/d$i.img"; done
  # shellcheck disable=SC2046
  write_config "$d/a.conf" "$level" "$layout" "$chunk" $(member_paths "$d" "$n")
  "$NBDRAID" create "$d/a.conf" 2>> "$T/create.log" || die "$name: create"
  grep -q 'State : active' <<< "$("$NBDRAID" examine "$d/d0.img")" ||
    die "$name: marked clean before its sync"
  conf=$d/a.conf
  start_server "$conf"
  # Writes while the sync runs land in stripes on both sides of it.
  head -c 1M /dev/urandom > "$T/$name.part"
  nbdcopy "$T/$name.part" "$uri"
  wait_status 60 'j["synced"] and j["job"]["kind"] == "idle"'
  nbdcopy "$uri" "$T/$name.img"
  cmp -n 1048576 "$T/$name.part" "$T/$name.img" || die "$name: data lost"
  stop_server
  # shellcheck disable=SC2046
  $MODEL check $(member_paths "$d" "$n") > "$T/check.out" ||
    die "$name: not consistent after the sync: $(cat "$T/check.out")"
  grep -q 'State : clean' <<< "$("$NBDRAID" examine "$d/d0.img")" ||
    die "$name: not marked clean"
  echo "ok: $name consistent after the background sync"
}

sync_case r1 1 - - 3
sync_case r5 5 left-asymmetric 64K 4
sync_case r6 6 right-symmetric 16K 6
sync_case r10 10 f2 64K 3

# Sparse members, one with garbage in the middle: stripes in holes on
# every member are consistent (zeros) and are passed by, so the members
# stay sparse and the resync counts only the rest; the garbage's
# stripes are synced.
sparse_case () {
  local name=$1 level=$2 layout=$3 chunk=$4 n=$5 d=$T/$1 i kib worked
  make_members "$d" "$n" 16M
  head -c 1M /dev/urandom |
    dd of="$d/d1.img" bs=1M seek=8 conv=notrunc status=none
  # shellcheck disable=SC2046
  write_config "$d/a.conf" "$level" "$layout" "$chunk" $(member_paths "$d" "$n")
  "$NBDRAID" create "$d/a.conf" 2>> "$T/create.log" || die "$name: create"
  conf=$d/a.conf
  start_server "$conf"
  wait_status 60 'j["synced"] and j["job"]["kind"] == "idle"'
  worked=$(last_work_bytes)
  stop_server
  # shellcheck disable=SC2046
  $MODEL check $(member_paths "$d" "$n") > "$T/check.out" ||
    die "$name: not consistent after the sync: $(cat "$T/check.out")"
  [ "$worked" -gt 0 ] && [ "$worked" -le $((4 * 1024 * 1024)) ] ||
    die "$name: the resync worked on $worked bytes of each member"
  for ((i = 0; i < n; i++)); do
    kib=$(du -k "$d/d$i.img" | cut -f1)
    [ "$kib" -le 4096 ] || die "$name: member $i has $kib KiB allocated"
  done
  echo "ok: $name: sparse members stay sparse; the sync worked on $worked bytes of each"
}

sparse_case s1 1 - - 2
sparse_case s5 5 left-symmetric 64K 4
sparse_case s6 6 left-symmetric 64K 5
sparse_case s10 10 n2 64K 4

d=$T/ac
mkdir -p "$d"
for i in 0 1 2 3; do head -c 6M /dev/urandom > "$d/d$i.img"; done
write_config "$d/a.conf" 5 left-symmetric 64K "$d"/d{0,1,2,3}.img
"$NBDRAID" create --assume-clean "$d/a.conf" 2>> "$T/create.log"
if $MODEL check "$d"/d{0,1,2,3}.img > /dev/null; then
  die "--assume-clean synced anyway"
fi
echo "ok: --assume-clean does not sync"
