#!/usr/bin/env bash
# A hypervisor's kernel attaches nbdraid: in a guest, nbd-client with
# four connections (-C 4; nbdkit sees four) attaches a RAID6 nbdraid
# serves on the host (over qemu's user network), mkfs.ext4, files
# written, unmounted, fsck clean, disconnected; on the host the
# filesystem is clean, holds the same files, and the members hold it
# as md lays it out.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires debugfs
requires e2fsck
requires_guest

new_array r6 6 left-symmetric 64K 5 24M
start_tcp_server () {
  local _
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    port=$((20000 + RANDOM % 20000))
    rm -f "$T/nbdkit.pid"
    nbdkit -f -i 127.0.0.1 -p "$port" -P "$T/nbdkit.pid" --filter=log \
      "$PLUGIN" "$conf" logfile="$T/requests.log" 2>> "$T/nbdkit.log" &
    server_pid=$!
    wait_for 10 _started_or_gone
    [ -s "$T/nbdkit.pid" ] && kill -0 "$server_pid" 2>/dev/null && return 0
    wait "$server_pid" 2>/dev/null || :
  done
  cat "$T/nbdkit.log" >&2
  die "nbdkit did not start on a TCP port"
}
cleanup_fn "stop_server"
start_tcp_server
uri="nbd://127.0.0.1:$port"
wait_status 60 'j["synced"] and j["job"]["kind"] == "idle"'

seeded_data "$T/src.img" $((8 << 20)) nbd-client
guest_script "$T/guest.sh" <<EOF2
if ! out=\$(nbd-client 10.0.2.2 $port /dev/nbd0 -N '' -C 4 2>&1); then
  fail "nbd-client: \$out"
  finish
  exit 1
fi
ok "nbd-client attached /dev/nbd0 with 4 connections"
echo "size \$(blockdev --getsize64 /dev/nbd0)"
mkfs.ext4 -q -F /dev/nbd0 > /tmp/mkfs.out 2>&1 || fail "mkfs.ext4: \$(cat /tmp/mkfs.out)"
mount -t ext4 /dev/nbd0 /mnt || fail "mount"
mkdir -p /mnt/dir/sub
i=0
while [ \$i -lt 8 ]; do
  dd if=/dev/disk/src of=/mnt/dir/f\$i bs=64k skip=\$((i * 16)) count=\$((i * 2 + 1)) 2>/dev/null
  i=\$((i + 1))
done
cp /bin/busybox /mnt/dir/sub/busybox
echo "hello from the guest" > /mnt/hello
umount /mnt || fail "umount"
if out=\$(fsck.ext4 -fn /dev/nbd0 2>&1); then ok "fsck.ext4 clean"
else fail "fsck.ext4: \$out"; fi
nbd-client -d /dev/nbd0 > /dev/null 2>&1 || fail "nbd-client -d"
ok "disconnected"
EOF2
guest_run nbd-client --net --disk "src=$T/src.img" "$T/guest.sh"
grep -q '^ok: disconnected' "$T/nbd-client.out" || die "the guest did not finish"

connections=$(grep -c ' Connect ' "$T/requests.log")
[ "$connections" -ge 4 ] ||
  die "nbd-client -C 4 made $connections connections, not 4"
echo "ok: nbd-client used $connections connections"
nbdcopy "$uri" "$T/fs.img"
stop_server
e2fsck -fn "$T/fs.img" > "$T/e2fsck.out" 2>&1 ||
  die "e2fsck on the host: $(cat "$T/e2fsck.out")"
for i in 0 1 2 3 4 5 6 7; do
  debugfs -R "dump /dir/f$i $T/f$i" "$T/fs.img" 2>/dev/null
  cmp "$T/f$i" <(dd if="$T/src.img" bs=64k skip=$((i * 16)) \
    count=$((i * 2 + 1)) status=none) || die "file f$i differs"
done
debugfs -R "dump /dir/sub/busybox $T/busybox" "$T/fs.img" 2>/dev/null
cmp "$T/busybox" /bin/busybox || die "busybox differs"
[ "$(debugfs -R "cat /hello" "$T/fs.img" 2>/dev/null)" = "hello from the guest" ] ||
  die "hello differs"
echo "ok: the host reads the guest's files, e2fsck clean"
check_members_hold "$T/fs.img"
echo "ok: the members hold the filesystem as md lays it out"
