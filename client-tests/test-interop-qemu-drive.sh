#!/usr/bin/env bash
# qemu's block layer as the client: a guest started with the nbdraid
# export as a virtio disk (-drive file=nbd+unix://...) reads the pattern
# the host wrote and writes another; the host reads that one back and
# the members hold it as md lays it out.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires_guest

new_array r5 5 left-symmetric 64K 4 16M
start_server "$conf"
wait_status 60 'j["synced"] and j["job"]["kind"] == "idle"'
size=$(export_size)
seeded_data "$T/a.img" "$size" qemu-drive-a
seeded_data "$T/b.img" "$size" qemu-drive-b
nbdcopy --connections=4 --flush "$T/a.img" "$uri"

guest_script "$T/guest.sh" <<EOF2
md_holds "the nbdraid drive" /dev/vda $size $(md5 "$T/a.img")
dd if=/dev/disk/b of=/dev/vda bs=64k conv=fsync 2>/dev/null || fail "dd to /dev/vda"
blockdev --flushbufs /dev/vda
echo 3 > /proc/sys/vm/drop_caches
md_holds "the nbdraid drive after writing" /dev/vda $size $(md5 "$T/b.img")
EOF2
guest_run qemu-drive --disk "b=$T/b.img" \
  --qemu -drive --qemu "file=nbd+unix:///?socket=$sock,format=raw,if=virtio,cache=none" \
  "$T/guest.sh"
nbdcopy "$uri" "$T/out"
cmp "$T/b.img" "$T/out" || die "the host reads other data than the guest wrote"
stop_server
check_members_hold "$T/b.img"
echo "ok: the guest read and wrote the nbdraid drive; the members agree"
