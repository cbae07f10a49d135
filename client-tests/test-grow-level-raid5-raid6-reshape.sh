#!/usr/bin/env bash
# nbdraid grow --level 6 --layout left-symmetric on a running 4-member
# RAID5 with a spare, under fio, as mdadm --grow --level=6 without
# --layout=preserve does: the spare takes the new Q role, fresh (its
# recovery_offset following the reshape), and one reshape restripes
# the RAID5 (as a RAID6 of layout left-symmetric-6) into a RAID6 of 5
# of layout left-symmetric, P and Q of each new stripe written whole:
# Q is never built on its own.  fio (crc32c verify) writes and checks
# the first half of the array throughout; the second half holds data
# written before, which must read back the same.  The server is killed
# (-9) mid-way and the reshape resumes.  At the end the array is a
# RAID6 of 5, as big as before, a check finds no mismatch, the config
# and the superblocks (mdadm --examine) say so, and the members match
# md's layout (md-model.py).
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires fio
fio --enghelp 2>/dev/null | grep -qw nbd || skip "fio has no nbd engine"
. "$abs_top_srcdir/client-tests/lib/reshape-under-fio.sh"

new_array r5 5 left-symmetric 64K 4 34M --assume-clean
dir=$T/r5
array_option "speed-min = 4M" "speed-max = 4M"
start_server "$conf"
size=$(export_size)
half=$((size / 2))
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"
truncate -s 34M "$dir/d4.img"
"$NBDRAID" add "$conf" "$dir/d4.img" > /dev/null || die "add refused"
out=$("$NBDRAID" grow "$conf" --level 6 --layout left-symmetric-6 2>&1) &&
  die "a layout the takeover gives was not refused: $out"
[ "$out" = "nbdraid: array test becomes a RAID6 of layout left-symmetric-6 without moving data: grow --level 6 alone does that" ] ||
  die "grow --level 6 --layout left-symmetric-6: $out"

fio_on_half "$half"
out=$("$NBDRAID" grow "$conf" --level 6 --layout left-symmetric) || die "grow refused: $out"
echo "$out"
wait_status 30 "j['job']['kind'] == 'reshape'" || die "no reshape runs: $(status_json)"
grep -qx "level = 6" "$conf" && grep -qx "layout = left-symmetric" "$conf" &&
  [ "$(grep -c '^member = ' "$conf")" = 5 ] || die "the config: $(cat "$conf")"
if command -v mdadm > /dev/null; then
  # d4 holds Q, valid as far as the reshape went.
  mdadm --examine "$dir/d4.img" > "$T/examine" 2>&1
  grep -q "Raid Level : raid6" "$T/examine" && grep -q "Layout : left-symmetric-6" "$T/examine" &&
    grep -q "New Layout : left-symmetric" "$T/examine" &&
    grep -q "Device Role : Active device 4" "$T/examine" && grep -q "Recovery Offset" "$T/examine" ||
    die "mdadm --examine: d4 is not the RAID6's fresh Q: $(cat "$T/examine")"
fi
wait "$fio_pid" || { cat "$T/fio.out" >&2; die "fio verify failed across the reshape"; }

crash_mid_reshape
grep -q "recovery of member 4" "$T/nbdkit.log" && die "Q was built on its own"
wait_status 60 "j['job']['kind'] == 'idle' and j['level'] == 6 and j['members'] == 5 and j['working'] == 5 and j['layout'] == 'left-symmetric'"
[ "$(export_size)" = "$size" ] || die "the array is $(export_size) bytes, not $size"
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
wait_status 60 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "mismatches after the reshape: $(status_json)"
reshaped_holds "$size" "$size" "$half" "$dir" 5
if command -v mdadm > /dev/null; then
  for m in $members; do
    mdadm --examine "$m" > "$T/examine" 2>&1
    grep -q "Raid Level : raid6" "$T/examine" && grep -q "Layout : left-symmetric$" "$T/examine" &&
      ! grep -q "Reshape\|Recovery Offset" "$T/examine" ||
      die "mdadm --examine $m: $(cat "$T/examine")"
  done
fi
echo "ok: RAID5 -> RAID6 left-symmetric in one reshape under fio and a crash"
