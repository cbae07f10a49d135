#!/usr/bin/env bash
# nbdraid serves arrays whose level md changed without moving data: in
# a guest, mdadm makes a 3-member RAID5 with a spare and takes it to a
# 4-member RAID6 with mdadm --grow --level=6 --layout=preserve (md's
# raid6_takeover: left-symmetric-6, the spare recovered as Q), and a
# 2-member RAID1 to RAID5 with mdadm --grow --level=5, and a 3-member
# RAID0 to RAID4 with mdadm --grow --level=4 (raid45_takeover_raid0),
# a disk added then built as its parity; with the data written before.  nbdkit raid serves each at the level, layout and
# chunk mdadm --examine gives, every byte equal; new data goes in
# through nbdraid, and in a second boot md assembles each, its check
# finds no mismatch and it holds the new data.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires mdadm
requires_guest

# name level members members-after grow-options
specs="m56 5 3 4 --level=6 --raid-devices=4 --layout=preserve
m15 1 2 2 --level=5
m04 0 3 4 --level=4"

seeded_data "$T/src.img" $((24 << 20)) md-takeover
disks=(--disk "src=$T/src.img") table=""
while read -r a level n after opts; do
  make_members "$T/$a" "$after" 8M
  table+="$a $level $n $after $opts"$'\n'
  add_disks "$a" "$T/$a" "$after"
done <<< "$specs"

guest_script "$T/create.sh" <<EOF2
k=0
while read -r a level n after opts; do
  [ -n "\$a" ] || continue
  md=md\$k
  k=\$((k + 1))
  bm=--bitmap=none # a RAID0 has none to refuse
  [ "\$level" != 0 ] || bm=
  md_create "\$a" \$md --level=\$level --raid-devices=\$n \$bm \$(members \$a \$n) || continue
  wait_idle \$md || fail "\$a: resync did not finish"
  size=\$(blockdev --getsize64 /dev/\$md)
  head -c \$size /dev/disk/src > /dev/\$md
  sync
  # A RAID0 takes no spare: the parity disk goes in once it is a RAID4.
  [ "\$after" = "\$n" ] || [ "\$level" = 0 ] ||
    mdadm /dev/\$md --add /dev/disk/\$a-\$n > /dev/null 2>&1 || fail "\$a: mdadm --add"
  if ! out=\$(mdadm --grow /dev/\$md \$opts 2>&1 < /dev/null); then
    fail "\$a: mdadm --grow \$opts: \$out"
    continue
  fi
  [ "\$level" != 0 ] ||
    mdadm /dev/\$md --add /dev/disk/\$a-\$n > /dev/null 2>&1 || fail "\$a: mdadm --add"
  wait_idle \$md || fail "\$a: recovery did not finish"
  echo "\$a: md is \$(cat /sys/block/\$md/md/level) of \$(cat /sys/block/\$md/md/raid_disks), layout \$(cat /sys/block/\$md/md/layout)"
  md_stop "\$a" \$md
  echo "made \$a \$size"
done <<'TABLE'
$table
TABLE
EOF2
guest_run md-create "${disks[@]}" "$T/create.sh"

table2="" bad=()
cleanup_fn stop_server
while read -r a level n after opts; do
  [ -n "$a" ] || continue
  size=$(sed -n "s/^made $a //p" "$T/md-create.out")
  [ -n "$size" ] || { bad+=("$a: the guest did not make it"); continue; }
  mdadm --examine "$T/$a/d0.img" > "$T/examine" 2>&1
  lv=$(sed -n 's/^ *Raid Level : raid//p' "$T/examine")
  layout=$(sed -n 's/^ *Layout : //p' "$T/examine")
  chunk=$(sed -n 's/^ *Chunk Size : //p' "$T/examine")
  # shellcheck disable=SC2046
  write_config "$T/$a/a.conf" "$lv" "${layout:--}" "${chunk:--}" \
    $(member_paths "$T/$a" "$after")
  md_array_served "$a" "$size" || { bad+=("$a (md's RAID$lv $layout): $why"); continue; }
  members=$(member_paths "$T/$a" "$after")
  check_members_hold "$T/data"
  echo "ok: $a: nbdraid serves md's RAID$lv $layout ${chunk:-} ($size bytes), wrote new data"
  table2+="$a $after $size $(md5 "$T/data")"$'\n'
done <<< "$table"
[ ${#bad[@]} = 0 ] || die "$(printf '%s; ' "${bad[@]}")"

guest_script "$T/check.sh" <<EOF2
k=0
while read -r a n size sum; do
  [ -n "\$a" ] || continue
  md=md\$k
  k=\$((k + 1))
  md_assemble "\$a" \$md \$(members \$a \$n) || continue
  md_verified "\$a" \$md \$size \$sum
done <<'TABLE'
$table2
TABLE
EOF2
guest_run md-check "${disks[@]}" "$T/check.sh"
grep -q '^FAIL' "$T/md-check.out" && die "md disagreed"
echo "ok: nbdraid serves what md took over, and md takes it back"
