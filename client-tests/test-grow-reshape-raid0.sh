#!/usr/bin/env bash
# nbdraid grow --raid-devices 5 on a running 4-member RAID0 under fio,
# as md grows one (mdadm's Grow.c): the RAID0 is a RAID4 with its
# parity role missing while the data is restriped, the new device
# filling that role (its recovery_offset following the reshape), and a
# RAID0 of 5 at the end.  fio (crc32c verify) writes and checks the
# first half of the array throughout; the second half holds data
# written before, which must read back the same.  The server is killed
# (-9) mid-way and the reshape resumes from the superblocks.  At the
# end the array holds 5/4 of its size (the new space zeros), the
# superblocks (mdadm --examine) say a RAID0 of 5 at the moved data
# offset, the config lists 5 members, the array assembles again and the
# members match md's layout (md-model.py).
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires fio
fio --enghelp 2>/dev/null | grep -qw nbd || skip "fio has no nbd engine"
. "$abs_top_srcdir/client-tests/lib/reshape-under-fio.sh"

new_array r0 0 - 64K 4 34M
dir=$T/r0
array_option "speed-min = 4M" "speed-max = 4M"
start_server "$conf"
size=$(export_size)
half=$((size / 2))
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"
offset0=$(mdadm --examine "$dir/d0.img" 2>/dev/null | sed -n 's/ *Data Offset : \([0-9]*\) sectors/\1/p')
truncate -s 34M "$dir/d4.img"
"$NBDRAID" add "$conf" "$dir/d4.img" > /dev/null || die "add refused"

fio_on_half "$half"
out=$("$NBDRAID" grow "$conf" --raid-devices 5) || die "grow refused: $out"
echo "$out"
wait_status 30 "j['job']['kind'] == 'reshape'" || die "no reshape runs: $(status_json)"
st=$("$NBDRAID" detail "$conf")
grep -q 'Raid Level : raid4' <<< "$st" && grep -qF 'Delta Devices : 1, (5->6)' <<< "$st" ||
  die "detail does not show md's RAID4 on the way: $st"
if command -v mdadm > /dev/null; then
  # d4 fills the RAID4's missing parity role (4), valid as far as the
  # reshape went; role 5, the new parity, is missing.
  mdadm --examine "$dir/d4.img" > "$T/examine" 2>&1
  grep -q "Raid Level : raid4" "$T/examine" && grep -q "Device Role : Active device 4" "$T/examine" &&
    grep -q "Recovery Offset" "$T/examine" && grep -q "Array State : AAAAA\. " "$T/examine" ||
    die "mdadm --examine: d4 is not the RAID4's recovering role 4: $(cat "$T/examine")"
fi
wait "$fio_pid" || { cat "$T/fio.out" >&2; die "fio verify failed across the reshape"; }
nbdcopy "$uri" "$T/out"
cmp -n "$((size - half))" -i "$half:$half" "$T/data" "$T/out" ||
  die "the data written before the reshape differs mid-way"

# kill -9 mid-way: it resumes where the superblocks say, and a spare
# line naming nothing is listed as that (the RAID4 mid-reshape has a
# role more than the config has member lines).
echo "spare = $dir/nosuch.img" >> "$conf"
crash_mid_reshape
status_is "[d['state'] for d in j['devices'] if d['path'].endswith('nosuch.img')] == ['missing']" ||
  die "the spare line naming nothing is not listed: $(status_json)"
sed -i '/nosuch.img/d' "$conf"
wait_status 60 "j['job']['kind'] == 'idle' and j['level'] == 0 and j['members'] == 5 and j['working'] == 5"
grep -q "reshape finished: 5 members" "$T/nbdkit.log" || die "no reshape finished in the log"
new=$(export_size)
[ "$new" = $((size / 4 * 5)) ] || die "the array is $new bytes, not $((size / 4 * 5))"
grep -qx "level = 0" "$conf" && [ "$(grep -c '^member = ' "$conf")" = 5 ] &&
  ! grep -q '^spare' "$conf" || die "the config does not list 5 members: $(cat "$conf")"
reshaped_holds "$size" "$new" "$half" "$dir" 5
if command -v mdadm > /dev/null; then
  for m in $members; do
    mdadm --examine "$m" > "$T/examine" 2>&1
    grep -q "Raid Level : raid0" "$T/examine" && grep -q "Raid Devices : 5" "$T/examine" &&
      ! grep -q "Reshape\|Recovery Offset" "$T/examine" ||
      die "mdadm --examine $m: $(cat "$T/examine")"
    offset=$(sed -n 's/ *Data Offset : \([0-9]*\) sectors/\1/p' "$T/examine")
    [ "$offset" -lt "$offset0" ] || die "$m: data offset $offset did not move back from $offset0"
  done
fi
echo "ok: RAID0 grow --raid-devices 5 under fio and a crash, $size -> $new bytes"
