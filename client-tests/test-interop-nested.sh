#!/usr/bin/env bash
# Nested arrays move between nbdraid and md both ways.  nbdraid makes a
# RAID50 (RAID0 over two 3-member RAID5 groups) and a RAID60 (RAID0 over
# two 4-member RAID6 groups) and fills them with seeded data; in a guest
# md assembles the groups, then the outer RAID0 over /dev/md*, the data
# matches and every group's check finds no mismatch.  In the same boot
# md creates a RAID50 of its own, inner arrays first, and fills it; on
# the host nbdkit raid serves it from a nested config and every byte
# matches.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires_guest

# nested_config FILE NAME LEVEL N: RAID0 (chunk 64K) over groups g0, g1
# of LEVEL (chunk 32K) with N members NAME-gG-dI.img each.
nested_config () {
  local file=$1 name=$2 level=$3 n=$4 g i
  {
    printf '[array]\nname = %s\nsocket = %s\nlevel = 0\nchunk = 64K\n' \
      "$name" "$T/$name.sock"
    printf '[members]\nmember = array:g0\nmember = array:g1\n'
    for g in 0 1; do
      printf '[array g%s]\nlevel = %s\nlayout = left-symmetric\nchunk = 32K\n[members g%s]\n' \
        "$g" "$level" "$g"
      for ((i = 0; i < n; i++)); do
        truncate -s 12M "$T/$name-g$g-d$i.img"
        echo "member = $T/$name-g$g-d$i.img"
      done
    done
  } > "$file"
}

disks=() table=""
for spec in "r50 5 3" "r60 6 4"; do
  read -r name level n <<< "$spec"
  nested_config "$T/$name.conf" "$name" "$level" "$n"
  conf=$T/$name.conf
  "$NBDRAID" create "$conf" 2>> "$T/create.log" ||
    { cat "$T/create.log" >&2; die "nbdraid create $name failed"; }
  start_server "$conf"
  wait_status 60 'all(a["synced"] and a["job"]["kind"] == "idle" for a in j["arrays"])'
  size=$(export_size)
  seeded_data "$T/data" "$size" "$name"
  nbdcopy --connections=4 --flush "$T/data" "$uri"
  stop_server
  table+="$name $n $size $(md5 "$T/data")"$'\n'
  for g in 0 1; do
    for ((i = 0; i < n; i++)); do
      disks+=(--disk "$name-g$g-$i=$T/$name-g$g-d$i.img")
    done
  done
done

# md's own RAID50: two RAID5 groups of 3, RAID0 over them.
for g in 0 1; do
  make_members "$T/md50-g$g" 3 12M
  mapfile -t -O ${#disks[@]} disks < <(disk_args "md50-g$g" "$T/md50-g$g" 3)
done
seeded_data "$T/src.img" $((48 << 20)) md-nested
disks+=(--disk "src=$T/src.img")

guest_script "$T/guest.sh" <<EOF2
k=0
while read -r name n size sum; do
  [ -n "\$name" ] || continue
  for g in 0 1; do
    if ! out=\$(mdadm --assemble /dev/md\$((k + g)) \$(members \$name-g\$g \$n) 2>&1); then
      fail "\$name: group g\$g: mdadm --assemble: \$out"
    fi
  done
  if ! out=\$(mdadm --assemble /dev/md\$((k + 2)) /dev/md\$k /dev/md\$((k + 1)) 2>&1); then
    fail "\$name: outer RAID0 over /dev/md\$k /dev/md\$((k + 1)): \$out"
  else
    md_holds "\$name (RAID0 over md\$k md\$((k + 1)))" /dev/md\$((k + 2)) \$size \$sum
    mdadm --stop /dev/md\$((k + 2)) > /dev/null 2>&1 || fail "\$name: stop outer"
  fi
  for g in 0 1; do
    md_check "\$name group g\$g" md\$((k + g))
    mdadm --stop /dev/md\$((k + g)) > /dev/null 2>&1 || fail "\$name: stop g\$g"
  done
  k=\$((k + 3))
done <<'TABLE'
$table
TABLE

for g in 0 1; do
  mdadm --create /dev/md\$((20 + g)) --run --metadata=1.2 --level=5 \
    --layout=left-symmetric --chunk=32K --raid-devices=3 --bitmap=none \
    \$(members md50-g\$g 3) < /dev/null > /tmp/out 2>&1 ||
    fail "md50 group g\$g: mdadm --create: \$(cat /tmp/out)"
  wait_idle md\$((20 + g)) || fail "md50 g\$g: resync did not finish"
done
mdadm --create /dev/md22 --run --metadata=1.2 --level=0 --chunk=64K \
  --raid-devices=2 /dev/md20 /dev/md21 < /dev/null > /tmp/out 2>&1 ||
  fail "md50 outer: mdadm --create: \$(cat /tmp/out)"
mdadm --examine /dev/md20 | grep -E 'Raid Level|Dev Size|Feature Map' |
  sed 's/^/md50 outer superblock: /'
size=\$(blockdev --getsize64 /dev/md22)
head -c \$size /dev/disk/src > /dev/md22
sync
mdadm --stop /dev/md22 > /dev/null 2>&1 || fail "md50: stop outer"
mdadm --stop /dev/md20 /dev/md21 > /dev/null 2>&1 || fail "md50: stop groups"
echo "made md50 \$size"
EOF2
guest_run nested "${disks[@]}" "$T/guest.sh"

size=$(sed -n 's/^made md50 //p' "$T/nested.out")
{
  printf '[array]\nname = md50\nsocket = %s\nlevel = 0\nchunk = 64K\n' "$T/md50.sock"
  printf '[members]\nmember = array:g0\nmember = array:g1\n'
  for g in 0 1; do
    printf '[array g%s]\nlevel = 5\nlayout = left-symmetric\nchunk = 32K\n[members g%s]\n' "$g" "$g"
    member_paths "$T/md50-g$g" 3 | sed 's/^/member = /'
  done
} > "$T/md50.conf"
cleanup_fn stop_server
try_server "$T/md50.conf" ||
  die "md50: nbdkit raid refuses md's RAID50: $server_log"
[ "$(export_size)" = "$size" ] ||
  die "md50: nbdraid serves $(export_size) bytes, md made $size"
nbdcopy "$uri" "$T/out"
cmp "$T/out" <(head -c "$size" "$T/src.img") ||
  die "md50: nbdraid reads other data than md wrote"
stop_server
echo "ok: nbdraid serves md's RAID50 ($size bytes) with every byte equal"
