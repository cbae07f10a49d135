#!/usr/bin/env bash
# write-behind both ways with Linux md, in one guest boot: md assembles
# a RAID1 nbdraid made with write-behind = 256 and a write-mostly
# member, reads the limit from the bitmap (mdadm -X "Allow write
# behind, max 256", sysfs bitmap/backlog 256) and holds the data; a
# RAID1 from mdadm --create --bitmap=internal --write-behind=128 carries
# 128 at offset 60 of its bitmap header, and nbdraid serves it with
# write-behind = 128 without rewriting it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires_guest

# nbdraid -> md
flagged_mirror wb 1M write-mostly "write-behind = 256"
start_server "$conf"
fill_served write-behind
stop_server

# md -> nbdraid: two empty members for mdadm --create
make_members "$T/mdwb" 2 8M
disks=()
add_disks wb "$T/wb" 2
add_disks mdwb "$T/mdwb" 2

guest_script "$T/guest.sh" <<EOF2
if md_assemble wb md0 \$(members wb 2); then
  md_holds "wb" /dev/md0 $size $sum
  x=\$(mdadm -X /dev/disk/wb-0 2>&1)
  if echo "\$x" | grep -q "Write Mode : Allow write behind, max 256"; then
    ok "wb: mdadm -X: write behind, max 256"
  else
    fail "wb: mdadm -X: \$x"
  fi
  backlog=\$(cat /sys/block/md0/md/bitmap/backlog)
  [ "\$backlog" = 256 ] && ok "wb: md's bitmap/backlog is 256" ||
    fail "wb: md's bitmap/backlog is \$backlog"
  md_check "wb" md0
  md_stop wb md0
fi
if md_create mdwb md1 --level=1 --raid-devices=2 --assume-clean \
     --bitmap=internal --write-behind=128 /dev/disk/mdwb-0 \
     --write-mostly /dev/disk/mdwb-1; then
  ok "mdwb: created with write-behind 128, member 1 write-mostly"
  md_stop mdwb md1
fi
EOF2
guest_run write-behind "${disks[@]}" "$T/guest.sh"
grep -q '^FAIL' "$T/write-behind.out" && die "md disagreed: $(cat "$T/write-behind.out")"

# The bitmap of md's members: 8 KiB in, write_behind at 60.
for f in d0 d1; do
  wb=$(od -An -tu4 -j $((8192 + 60)) -N4 "$T/mdwb/$f.img" | tr -d ' ')
  [ "$wb" = 128 ] || die "md's $f: bitmap write_behind is $wb, not 128"
done
md_mirror_config mdwb write-mostly "write-behind = 128"
start_server "$conf"
grep -q "write-behind limit goes" "$T/nbdkit.log" &&
  die "md's limit was rewritten: $(cat "$T/nbdkit.log")"
size=$(export_size)
seeded_data "$T/data2" "$size" md-write-behind
nbdcopy --flush "$T/data2" "$uri"
nbdcopy "$uri" "$T/back" && cmp "$T/data2" "$T/back" || die "md's array read back differs"
stop_server
echo "ok: md reads nbdraid's write-behind limit; nbdraid serves md's"
