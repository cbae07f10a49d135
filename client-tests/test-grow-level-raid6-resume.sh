#!/usr/bin/env bash
# kill -9 of the server while the Q disk of a RAID5 taken to RAID6
# (grow --level 6) is built: the superblocks already say RAID6,
# left-symmetric-6, four members, the new one recovering (mdadm
# --examine agrees), and the config says so too.  Restarted, the array
# assembles as RAID6 and the recovery resumes past where it was, not
# from 0, and completes: check finds no mismatch, every byte reads back
# and the members match md's layout.
. "$(dirname "$0")/lib.sh"
. "$abs_top_srcdir/client-tests/lib/grow-resume.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

new_array r5 5 left-symmetric 64K 3 34M --assume-clean
dir=$T/r5
truncate -s 34M "$dir/d3.img"
grow_until_crash 3 "$dir/d3.img" --level 6

grep -qx "level = 6" "$conf" && grep -qx "layout = left-symmetric-6" "$conf" &&
  [ "$(grep -c '^member = ' "$conf")" = 4 ] || die "the config does not say RAID6: $(cat "$conf")"
if command -v mdadm > /dev/null; then
  mdadm --examine "$dir/d3.img" > "$T/examine" 2>&1
  grep -q "Raid Level : raid6" "$T/examine" && grep -q "Raid Devices : 4" "$T/examine" &&
    grep -q "Device Role : Active device 3" "$T/examine" && grep -q "Recovery Offset : " "$T/examine" ||
    die "mdadm does not see the Q disk recovering: $(cat "$T/examine")"
fi

members="$dir/d0.img $dir/d1.img $dir/d2.img $dir/d3.img"
recovery_resumes 3 "$dir/d3.img"
echo "ok: the Q disk's recovery resumed at $resumed bytes after kill -9"
