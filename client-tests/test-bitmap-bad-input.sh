#!/usr/bin/env bash
# Bad bitmap settings are refused by file:line; a bitmap that fails
# validation (wrong magic, another array's UUID) is reported and not
# trusted: the array, stopped dirty, falls back to a full resync.
. "$(dirname "$0")/lib.sh"
requires nbdkit

SBEDIT="/usr/bin/python3 $abs_top_srcdir/client-tests/sb-edit.py"
make_members "$T/m" 3 8M
write_config "$T/m/a.conf" 5 left-symmetric 64K "$T"/m/d{0,1,2}.img
for bad in "bitmap-chunk = 3K" "bitmap-chunk = 2K" "bitmap = external"; do
  sed "/^\[array\]/a $bad" "$T/m/a.conf" > "$T/m/b.conf"
  if out=$("$NBDRAID" create "$T/m/b.conf" 2>&1); then die "accepted: $bad"; fi
  grep -Eq "b.conf:2: (bitmap-chunk '[0-9]K' is not a power of two from 4K|bitmap 'external' is not internal or none)" <<< "$out" ||
    die "$bad: $out"
  echo "ok: $bad: $out"
done

# bitmap_corrupt MEMBER OFFSET VALUE: a byte of the bitmap header (8 KiB
# into the member) changed
bitmap_corrupt () {
  printf "$(printf '\\%03o' "$3")" |
    dd of="$1" bs=1 seek=$((8192 + $2)) conv=notrunc status=none
}

for what in magic uuid; do
  new_array "$what" 5 left-symmetric 64K 3 8M --assume-clean
  start_server "$conf"
  # Every block written: a resync passes holes by without counting them.
  random_file "$T/$what.data" "$(export_size)"
  nbdcopy "$T/$what.data" "$uri"
  stop_server
  for i in 0 1 2; do
    case $what in
      magic) bitmap_corrupt "$T/$what/d$i.img" 0 0x58 ;;
      uuid) bitmap_corrupt "$T/$what/d$i.img" 8 0x5a ;;
    esac
    $SBEDIT "$T/$what/d$i.img" 208 Q 0     # stopped dirty
  done
  start_server "$conf"
  grep -q "the bitmap on .* is not usable: .*not trusting it" "$T/nbdkit.log" ||
    die "$what: not reported: $(cat "$T/nbdkit.log")"
  wait_status 60 "j['synced'] and j['job']['kind'] == 'idle'"
  status_is "j['last_work_bytes'] == j['member_bytes']" ||
    die "$what: not a full resync: $(status_json)"
  stop_server
  echo "ok: bad bitmap $what: $(grep -o 'the bitmap on .*' "$T/nbdkit.log" | head -1)"
  rm -f "$T/nbdkit.log"
done
