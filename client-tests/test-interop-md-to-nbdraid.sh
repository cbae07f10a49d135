#!/usr/bin/env bash
# nbdraid serves what Linux md made, and md takes it back: in a guest,
# mdadm --create makes arrays of every level and layout, with and
# without a bitmap (RAID5 as mdadm makes it, recovering onto its last
# member), waits for the resync and writes seeded data; nbdkit raid
# serves each one with every byte equal, new data goes in through
# nbdraid, and in a second boot md assembles each array, its check
# finds no mismatch and it holds the new data.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires_guest

# name level layout chunk members
specs="r0 0 - 64K 3
r1 1 - - 2
r5la 5 left-asymmetric 64K 4
r5ra 5 right-asymmetric 64K 4
r5ls 5 left-symmetric 64K 4
r5rs 5 right-symmetric 64K 3
r6la 6 left-asymmetric 64K 5
r6ra 6 right-asymmetric 64K 5
r6ls 6 left-symmetric 32K 4
r6rs 6 right-symmetric 64K 5
r4 4 - 64K 4
r5pf 5 parity-first 64K 4
r6pl 6 parity-last 64K 4
r6pf6 6 parity-first-6 64K 5
r10n2 10 n2 64K 4
r10n3 10 n3 64K 4
r10f2 10 f2 64K 4
r10o2 10 o2 64K 3"

seeded_data "$T/src.img" $((24 << 20)) md-to-nbdraid
disks=(--disk "src=$T/src.img") table=""
while read -r name level layout chunk n; do
  for bitmap in none 1M; do
    [ "$level" = 0 ] && [ "$bitmap" != none ] && continue
    a=$name-${bitmap/none/nb}
    a=${a/-1M/-bm}
    make_members "$T/$a" "$n" 8M
    table+="$a $level $layout $chunk $n $bitmap"$'\n'
    mapfile -t -O ${#disks[@]} disks < <(disk_args "$a" "$T/$a" "$n")
  done
done <<< "$specs"

guest_script "$T/create.sh" <<EOF2
k=0
while read -r a level layout chunk n bitmap; do
  [ -n "\$a" ] || continue
  md=md\$k
  k=\$((k + 1))
  opts="--metadata=1.2 --level=\$level --raid-devices=\$n"
  [ "\$layout" = - ] || opts="\$opts --layout=\$layout"
  [ "\$chunk" = - ] || opts="\$opts --chunk=\$chunk"
  if [ \$level != 0 ]; then
    if [ \$bitmap = none ]; then opts="\$opts --bitmap=none"
    else opts="\$opts --bitmap=internal --bitmap-chunk=\$bitmap"; fi
  fi
  if ! out=\$(mdadm --create /dev/\$md --run \$opts \$(members \$a \$n) 2>&1 < /dev/null)
  then
    fail "\$a: mdadm --create \$opts: \$out"
    continue
  fi
  wait_idle \$md || fail "\$a: resync did not finish"
  size=\$(blockdev --getsize64 /dev/\$md)
  head -c \$size /dev/disk/src > /dev/\$md
  sync
  mdadm --stop /dev/\$md > /dev/null 2>&1 || fail "\$a: mdadm --stop"
  echo "made \$a \$size"
done <<'TABLE'
$table
TABLE
EOF2
guest_run md-create "${disks[@]}" "$T/create.sh"

table2="" bad=()
cleanup_fn stop_server
while read -r a level layout chunk n bitmap; do
  [ -n "$a" ] || continue
  size=$(sed -n "s/^made $a //p" "$T/md-create.out")
  [ -n "$size" ] || { bad+=("$a: the guest did not make it"); continue; }
  # shellcheck disable=SC2046
  write_config "$T/$a/a.conf" "$level" "$layout" "$chunk" \
    $(member_paths "$T/$a" "$n")
  if ! md_array_served "$a" "$size"; then
    bad+=("$a: $why; mdadm --examine: $(
      mdadm --examine "$T/$a/d0.img" 2>&1 |
        grep -E 'Feature Map|Raid Level|Avail Dev Size|Used Dev Size|Array Size' |
        tr -s ' \n' ' ')")
    continue
  fi
  echo "ok: $a: nbdraid reads md's $size bytes, wrote new data"
  table2+="$a $level $n $size $(md5 "$T/data") ${bitmap/1M/1 MB}"$'\n'
done <<< "$table"

guest_script "$T/check.sh" <<EOF2
k=0
while read -r a level n size sum bitmap; do
  [ -n "\$a" ] || continue
  md=md\$k
  k=\$((k + 1))
  [ "\$bitmap" = none ] || examine_bitmap "\$a" /dev/disk/\$a-0 "\$bitmap"
  if ! out=\$(mdadm --assemble /dev/\$md \$(members \$a \$n) 2>&1); then
    fail "\$a: mdadm --assemble: \$out"
    continue
  fi
  md_holds "\$a" /dev/\$md \$size \$sum
  [ \$level = 0 ] || md_check "\$a" \$md
  mdadm --stop /dev/\$md > /dev/null 2>&1 || fail "\$a: mdadm --stop"
done <<'TABLE'
$table2
TABLE
EOF2
guest_run md-check "${disks[@]}" "$T/check.sh"
if [ ${#bad[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${bad[@]}"
  die "${#bad[@]} of md's arrays not served right by nbdraid"
fi
echo "ok: nbdraid serves md's arrays, and md takes them back"
