#!/usr/bin/env bash
# The partial parity log both ways with Linux md, each array left
# unclean with entries in its logs, in one guest boot.  nbdraid -> md: a
# RAID5 nbdraid made with consistency-policy = ppl, written and then
# killed with -9 straight after its last FUA writes; md assembles it,
# replays nbdraid's logs (and, finding them sound, starts clean without
# a resync: resync_start none), shows "Consistency Policy : ppl", holds
# the data, and check finds no mismatch.  md -> nbdraid: mdadm --create
# --consistency-policy=ppl, written with the safemode delay so long
# that it stays active, and the power cut (sysrq b); nbdraid serves it, replays md's
# logs, holds the data, and check finds no mismatch.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdsh
requires_guest

# nbdraid -> md
interop_config "$T/pp" 5 left-symmetric 64K 3 16M -
sed -i '/^\[array\]/a consistency-policy = ppl' "$conf"
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create: $(cat "$T/create.log")"
"$NBDRAID" examine "$T/pp/d0.img" | grep -q "PPL : 2048 sectors at offset 8" ||
  die "examine shows no PPL: $("$NBDRAID" examine "$T/pp/d0.img")"
start_server "$conf"
size=$(export_size)
seeded_data "$T/data" "$size" ppl-interop
nbdcopy --flush "$T/data" "$uri"
# Small writes last, so the logs hold partial parity; the array is
# still dirty when it dies.
fua_writes "$T/data" 7 40
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || :
server_pid=
sum=$(md5 "$T/data")
"$NBDRAID" examine "$T/pp/d0.img" | grep -q "State : active" ||
  die "the killed array is not dirty: $("$NBDRAID" examine "$T/pp/d0.img")"

# md -> nbdraid: three empty members for mdadm --create
make_members "$T/mdpp" 3 16M
mapfile -t disks < <(disk_args pp "$T/pp" 3; disk_args mdpp "$T/mdpp" 3)

guest_script "$T/guest.sh" <<EOF2
if out=\$(mdadm --assemble /dev/md0 \$(members pp 3) 2>&1); then
  rs=\$(cat /sys/block/md0/md/resync_start)
  [ "\$rs" = none ] && ok "pp: md replayed the logs and starts clean" ||
    fail "pp: resync_start \$rs after replay (a log md found unsound?)"
  mdadm --detail /dev/md0 | grep -q "Consistency Policy : ppl" &&
    ok "pp: Consistency Policy : ppl" ||
    fail "pp: mdadm --detail: \$(mdadm --detail /dev/md0)"
  md_holds "pp" /dev/md0 $size $sum
  md_check "pp" md0
  mdadm --stop /dev/md0 > /dev/null 2>&1 || fail "pp: mdadm --stop"
else
  fail "pp: mdadm --assemble: \$out"
fi
if out=\$(mdadm --create /dev/md1 --run --metadata=1.2 --level=5 \
          --chunk=64K --raid-devices=3 --consistency-policy=ppl \
          \$(members mdpp 3) 2>&1 < /dev/null); then
  wait_idle md1 || fail "mdpp: resync did not finish"
  echo 3600 > /sys/block/md1/md/safe_mode_delay
  dd if=/dev/urandom of=/dev/md1 bs=1M oflag=direct 2> /dev/null
  dd if=/dev/urandom of=/dev/md1 bs=4k count=64 seek=100 oflag=direct 2> /dev/null
  echo "mdpp sum \$(md5sum < /dev/md1 | cut -d' ' -f1) size \$(blockdev --getsize64 /dev/md1)"
  echo "mdpp state \$(cat /sys/block/md1/md/array_state)"
  # md marks its arrays clean at power-off (its reboot notifier): cut
  # the power instead, reporting first what finish would.
  echo "NBDRAID-GUEST-EXIT \$fails"
  # (the serial port drains its buffer meanwhile)
  sleep 3
  echo b > /proc/sysrq-trigger
else
  fail "mdpp: mdadm --create: \$out"
fi
EOF2
guest_run ppl "${disks[@]}" "$T/guest.sh"
grep -q '^FAIL' "$T/ppl.out" && die "md disagreed: $(cat "$T/ppl.out")"

read -r _ _ mdsum _ mdsize < <(grep '^mdpp sum ' "$T/ppl.out") ||
  die "the guest made no md array"
grep -q '^mdpp state active' "$T/ppl.out" ||
  die "md's array was not left active: $(grep '^mdpp state' "$T/ppl.out")"
conf=$T/mdpp/a.conf
# shellcheck disable=SC2046
write_config "$conf" 5 left-symmetric 64K $(member_paths "$T/mdpp" 3)
sed -i '/^\[array\]/a consistency-policy = ppl' "$conf"
"$NBDRAID" examine "$T/mdpp/d0.img" | grep -q "State : active" ||
  die "md left its array clean: $("$NBDRAID" examine "$T/mdpp/d0.img")"
start_server "$conf"
grep -q "partial parity logs replayed: [1-9][0-9]* entries, 0 skipped" \
  "$T/nbdkit.log" || die "md's logs were not replayed: $(cat "$T/nbdkit.log")"
[ "$(export_size)" = "$mdsize" ] || die "size $(export_size), md's $mdsize"
nbdcopy "$uri" "$T/back"
[ "$(md5 "$T/back")" = "$mdsum" ] || die "md's array reads back differently"
status_is "j['synced'] and j['consistency_policy'] == 'ppl'" ||
  die "not in sync after the replay: $(status_json)"
"$NBDRAID" check "$conf" > /dev/null
wait_status 120 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0" || die "check after md's log: $(status_json)"
stop_server
echo "ok: md replays nbdraid's partial parity logs; nbdraid replays md's"
