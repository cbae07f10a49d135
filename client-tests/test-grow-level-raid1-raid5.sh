#!/usr/bin/env bash
# nbdraid grow --level 5 on a running 2-member RAID1, under a writer,
# and --level 1 back (md's raid5_takeover_raid1 and raid1_takeover: a
# 2-disk RAID5 holds its data exactly as a mirror, so nothing moves).
# After each change the superblocks (mdadm --examine), the status and
# the config say the new level, layout and chunk (md's: left-symmetric,
# 64K); every byte reads back, a check finds no mismatch, the array
# assembles again from the rewritten config and the members match md's
# layout for the new level (md-model.py).
. "$(dirname "$0")/lib.sh"
. "$abs_top_srcdir/client-tests/lib/level-change.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

new_array r1 1 - - 2 34M --assume-clean
start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"

level_change 5
grep -qx "level = 5" "$conf" && grep -qx "layout = left-symmetric" "$conf" &&
  grep -qx "chunk = 64K" "$conf" || die "the config does not say RAID5: $(cat "$conf")"
if command -v mdadm > /dev/null; then
  mdadm --examine "$T/r1/d1.img" > "$T/examine" 2>&1
  grep -q "Raid Level : raid5" "$T/examine" && grep -q "Layout : left-symmetric" "$T/examine" &&
    grep -q "Chunk Size : 64K" "$T/examine" || die "mdadm does not see a RAID5: $(cat "$T/examine")"
fi
echo "ok: RAID1 -> RAID5 under a writer"

level_change 1
grep -qx "level = 1" "$conf" && ! grep -q "^layout\|^chunk" "$conf" ||
  die "the config does not say RAID1: $(cat "$conf")"
if command -v mdadm > /dev/null; then
  mdadm --examine "$T/r1/d0.img" > "$T/examine" 2>&1
  grep -q "Raid Level : raid1" "$T/examine" || die "mdadm does not see a RAID1: $(cat "$T/examine")"
fi
stop_server
echo "ok: RAID5 -> RAID1 under a writer"
