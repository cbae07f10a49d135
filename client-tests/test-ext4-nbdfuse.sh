#!/usr/bin/env bash
# A real filesystem on the array: nbdfuse -> loop device -> mkfs.ext4 ->
# mount -> copy files -> umount -> fsck.ext4 -fn clean; the files read
# back identical after the server is restarted.
. "$(dirname "$0")/lib.sh"
requires_root
requires nbdkit
requires nbdfuse
requires losetup
requires mkfs.ext4
[ -e /dev/fuse ] || skip "no /dev/fuse"
losetup -f > /dev/null 2>&1 || skip "no loop devices"

new_array fs 6 left-symmetric 64K 6 40M
mkdir -p "$T/fuse" "$T/mnt" "$T/files"
for i in 1 2 3 4 5; do head -c $((i * 700000 + 13)) /dev/urandom > "$T/files/f$i"; done

attach () {
  start_server "$conf"
  nbdfuse "$T/fuse" "$uri" &
  fuse_pid=$!
  cleanup_fn "fusermount3 -u '$T/fuse' 2>/dev/null || umount -l '$T/fuse' 2>/dev/null"
  wait_for 10 test -e "$T/fuse/nbd" || die "nbdfuse did not start"
  loop=$(losetup -f --show "$T/fuse/nbd")
  cleanup_fn "losetup -d $loop 2>/dev/null"
}
detach () {
  losetup -d "$loop"
  fusermount3 -u "$T/fuse" 2>/dev/null || umount "$T/fuse"
  wait "$fuse_pid" || :
  stop_server
}

attach
mkfs.ext4 -q -F "$loop" || die "mkfs failed"
mount "$loop" "$T/mnt"
cleanup_fn "umount '$T/mnt' 2>/dev/null"
cp -r "$T/files" "$T/mnt/"
umount "$T/mnt"
fsck.ext4 -fn "$loop" > "$T/fsck.out" 2>&1 || die "fsck: $(cat "$T/fsck.out")"
detach
echo "ok: mkfs, copy, fsck clean"

attach
mount -o ro "$loop" "$T/mnt"
diff -r "$T/files" "$T/mnt/files" || die "files differ after restart"
umount "$T/mnt"
detach
echo "ok: files identical after restart"
