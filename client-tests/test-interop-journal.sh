#!/usr/bin/env bash
# The write journal both ways with Linux md, each array left unclean
# with entries in its journal, in one guest boot.  nbdraid -> md: a
# RAID5 nbdraid made with consistency-policy = journal, written and
# then killed with -9 straight after its last FUA writes; md assembles
# it with the journal, replays nbdraid's log (dmesg: "recovering ...
# data-parity stripes"), shows "Consistency Policy : journal", holds the
# data, and check finds no mismatch.  md -> nbdraid: mdadm --create
# --write-journal, written, and the power cut (sysrq b); nbdraid serves
# it, replays md's log, holds the data, and check finds no mismatch.
# With JOURNAL_MODE=write-back and JOURNAL_LEVEL=6
# (test-interop-journal-write-back.sh) both arrays are RAID6 of 4 in
# md's write-back mode and the logs hold data without parity.
mode=${JOURNAL_MODE:-write-through}
level=${JOURNAL_LEVEL:-5}
n=$((level - 2))
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdsh
requires_guest

# nbdraid -> md
journaled_unclean "$T/jj" "$level" "$n" "$mode" "journal-interop-$mode"

# md -> nbdraid: three empty members and a journal for mdadm --create
make_members "$T/mdjj" "$n" 16M
truncate -s 8M "$T/mdjj/journal.img"
mapfile -t disks < <(disk_args jj "$T/jj" "$n"; disk_args mdjj "$T/mdjj" "$n")
disks+=(--disk "jj-journal=$T/jj/journal.img"
        --disk "mdjj-journal=$T/mdjj/journal.img")

guest_script "$T/guest.sh" <<EOF2
if out=\$(mdadm --assemble /dev/md0 \$(members jj $n) /dev/disk/jj-journal 2>&1); then
  dmesg | grep "md/raid:md0: \(recovering\|starting from clean\)" |
    sed 's/^/jj dmesg: /'
  mdadm --detail /dev/md0 | grep -q "Consistency Policy : journal" &&
    ok "jj: Consistency Policy : journal" ||
    fail "jj: mdadm --detail: \$(mdadm --detail /dev/md0)"
  md_holds "jj" /dev/md0 $size $sum
  md_check "jj" md0
  mdadm --stop /dev/md0 > /dev/null 2>&1 || fail "jj: mdadm --stop"
else
  fail "jj: mdadm --assemble: \$out"
fi
if out=\$(mdadm --create /dev/md1 --run --metadata=1.2 --level=$level \
          --chunk=64K --raid-devices=$n --write-journal /dev/disk/mdjj-journal \
          \$(members mdjj $n) 2>&1 < /dev/null); then
  wait_idle md1 || fail "mdjj: resync did not finish"
  echo $mode > /sys/block/md1/md/journal_mode || fail "mdjj: journal_mode"
  echo "mdjj mode \$(cat /sys/block/md1/md/journal_mode)"
  dd if=/dev/urandom of=/dev/md1 bs=1M oflag=direct 2> /dev/null
  dd if=/dev/urandom of=/dev/md1 bs=4k count=64 seek=100 oflag=direct 2> /dev/null
  echo "mdjj sum \$(md5sum < /dev/md1 | cut -d' ' -f1) size \$(blockdev --getsize64 /dev/md1)"
  echo "NBDRAID-GUEST-EXIT \$fails"
  # (the serial port drains its buffer meanwhile)
  sleep 3
  echo b > /proc/sysrq-trigger
else
  fail "mdjj: mdadm --create: \$out"
fi
EOF2
guest_run journal "${disks[@]}" "$T/guest.sh"
grep -q '^FAIL' "$T/journal.out" && die "md disagreed: $(cat "$T/journal.out")"
if [ "$mode" = write-back ]; then
  recovered="[1-9][0-9]* data-only stripes"
  replayed="[1-9][0-9]* pages without parity kept to write"
else
  recovered="0 data-only stripes and [1-9][0-9]* data-parity stripes"
  replayed="replayed [1-9][0-9]* meta blocks"
fi
grep -q "^jj dmesg: .*recovering $recovered" "$T/journal.out" ||
  die "md replayed nothing of nbdraid's log: $(grep dmesg "$T/journal.out")"
grep -q "^mdjj mode .*\[$mode\]" "$T/journal.out" ||
  die "md did not run $mode: $(grep mode "$T/journal.out")"

read -r _ _ mdsum _ mdsize < <(grep '^mdjj sum ' "$T/journal.out") ||
  die "the guest made no md array"
conf=$T/mdjj/a.conf
# shellcheck disable=SC2046
write_config "$conf" "$level" left-symmetric 64K $(member_paths "$T/mdjj" "$n")
sed -i '/^\[array\]/a consistency-policy = journal' "$conf"
echo "journal = $T/mdjj/journal.img" >> "$conf"
"$NBDRAID" examine "$T/mdjj/journal.img" > "$T/exj.txt" ||
  die "md's journal: $(cat "$T/exj.txt")"
grep -qi "Device Role : journal" "$T/exj.txt" ||
  die "md's journal: $(cat "$T/exj.txt")"
start_server "$conf"
grep -q "write journal .*$replayed" "$T/nbdkit.log" ||
  die "md's log was not replayed: $(cat "$T/nbdkit.log")"
[ "$(export_size)" = "$mdsize" ] || die "size $(export_size), md's $mdsize"
nbdcopy "$uri" "$T/back"
[ "$(md5 "$T/back")" = "$mdsum" ] || die "md's array reads back differently"
"$NBDRAID" check "$conf" > /dev/null
wait_status 120 "j['job']['kind'] == 'idle'"
status_is "j['mismatches'] == 0 and j['consistency_policy'] == 'journal'" ||
  die "check after md's log: $(status_json)"
stop_server
echo "ok: RAID$level, $mode: md recovers nbdraid's write journal" \
  "($(grep -o "recovering .* stripes" "$T/journal.out"));" \
  "nbdraid md's ($(grep -o "replayed [0-9]* meta blocks ([^)]*)" "$T/nbdkit.log"))"
