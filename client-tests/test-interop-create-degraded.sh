#!/usr/bin/env bash
# Linux md takes the arrays nbdraid creates with "member = missing":
# each is created without some roles, filled with seeded data through
# NBD and stopped; in a guest md assembles it from the devices there
# are (no --run: the superblocks record the empty roles), reads the
# data, rebuilds a new disk into each empty role (mdadm --add) and its
# check finds no mismatch.  One guest boot for all of them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo
requires_guest

# name level layout chunk members missing-roles (comma-separated)
specs="r1 1 - - 3 2
r5 5 left-symmetric 64K 3 1
r6one 6 left-symmetric 64K 5 4
r6two 6 right-asymmetric 64K 4 0,2
r10 10 n2 64K 4 1"

disks=() table=""
while read -r name level layout chunk n roles; do
  interop_config "$T/$name" "$level" "$layout" "$chunk" "$n" 8M -
  present=""
  for ((i = 0; i < n; i++)); do
    case ",$roles," in
      *",$i,"*)
        sed -i "s|^member = $T/$name/d$i.img\$|member = missing|" "$conf"
        rm "$T/$name/d$i.img"
        truncate -s 8M "$T/$name/new$i.img"
        disks+=(--disk "$name-new$i=$T/$name/new$i.img") ;;
      *)
        present+=" $i"
        disks+=(--disk "$name-$i=$T/$name/d$i.img") ;;
    esac
  done
  "$NBDRAID" create "$conf" 2>> "$T/create.log" ||
    { cat "$T/create.log" >&2; die "nbdraid create $name failed"; }
  start_server "$conf"
  size=$(export_size)
  seeded_data "$T/data" "$size" "$name"
  nbdcopy --connections=4 --flush "$T/data" "$uri"
  stop_server
  table+="$name $size $(md5 "$T/data") ${roles//,/ } -${present}"$'\n'
done <<< "$specs"

guest_script "$T/guest.sh" <<EOF2
k=0
while read -r line; do
  [ -n "\$line" ] || continue
  set -- \$line
  a=\$1 size=\$2 sum=\$3
  shift 3
  empty="" devs=""
  while [ "\$1" != - ]; do empty="\$empty \$1"; shift; done
  shift
  for i in "\$@"; do devs="\$devs /dev/disk/\$a-\$i"; done
  md=md\$k
  k=\$((k + 1))
  if ! out=\$(mdadm --assemble /dev/\$md \$devs 2>&1); then
    fail "\$a: mdadm --assemble without --run: \$out"
    continue
  fi
  md_holds "\$a degraded" /dev/\$md \$size \$sum
  for i in \$empty; do
    mdadm /dev/\$md --add /dev/disk/\$a-new\$i > /dev/null 2>&1 ||
      fail "\$a: mdadm --add new\$i"
    wait_idle \$md || fail "\$a: recovery onto new\$i did not finish"
  done
  grep -A1 "^\$md :" /proc/mdstat | grep -q '\[U*\]\$' ||
    fail "\$a: not every role working after the rebuilds: \$(grep -A1 "^\$md :" /proc/mdstat)"
  md_check "\$a rebuilt" \$md
  md_holds "\$a rebuilt" /dev/\$md \$size \$sum
  mdadm --stop /dev/\$md > /dev/null 2>&1 || fail "\$a: mdadm --stop"
done <<'TABLE'
$table
TABLE
EOF2
guest_run create-degraded "${disks[@]}" "$T/guest.sh"
grep -q '^FAIL' "$T/create-degraded.out" && die "md disagreed"
echo "ok: md assembles, reads and rebuilds every degraded array nbdraid made"
