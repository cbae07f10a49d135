#!/usr/bin/env bash
# kill -9 of the server while the mirror nbdraid grow --raid-devices 3
# added is recovered: the superblocks already say raid_disks 3 with the
# spare in role 2 (mdadm --examine agrees) and how far its recovery
# came; the config lists three members.  Restarted, the array assembles
# and the recovery resumes from there, not from 0, and completes: check
# finds no mismatch and every byte reads back.
. "$(dirname "$0")/lib.sh"
. "$abs_top_srcdir/client-tests/lib/grow-resume.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

new_array r1 1 - - 2 34M --assume-clean
dir=$T/r1
truncate -s 34M "$dir/s0.img"
grow_until_crash 2 "$dir/s0.img" --raid-devices 3

[ "$(grep -c '^member = ' "$conf")" = 3 ] || die "the config does not list three members: $(cat "$conf")"
if command -v mdadm > /dev/null; then
  mdadm --examine "$dir/s0.img" > "$T/examine" 2>&1
  grep -q "Raid Devices : 3" "$T/examine" && grep -q "Device Role : Active device 2" "$T/examine" &&
    grep -q "Recovery Offset : " "$T/examine" ||
    die "mdadm does not see the new mirror recovering in role 2: $(cat "$T/examine")"
fi

members="$dir/d0.img $dir/d1.img $dir/s0.img"
recovery_resumes 2 "$dir/s0.img"
echo "ok: the new mirror's recovery resumed at $resumed bytes after kill -9"
