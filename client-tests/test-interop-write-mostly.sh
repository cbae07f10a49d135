#!/usr/bin/env bash
# write-mostly and failfast both ways with Linux md, in one guest boot:
# md assembles a RAID1 nbdraid made with a write-mostly failfast member
# and marks that device write_mostly and failfast in sysfs, holding the
# data; mdadm --create --write-mostly --failfast makes a RAID1 whose
# flagged member nbdraid examine and status show so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires nbdcopy
requires_guest

# nbdraid -> md
flagged_mirror wm - "write-mostly failfast"
start_server "$conf"
fill_served write-mostly
stop_server

# md -> nbdraid: two empty members for mdadm --create
make_members "$T/mdwm" 2 8M
disks=()
add_disks wm "$T/wm" 2
add_disks mdwm "$T/mdwm" 2

guest_script "$T/guest.sh" <<EOF2
if md_assemble wm md0 \$(members wm 2); then
  md_holds "wm" /dev/md0 $size $sum
  dev=\$(basename "\$(readlink -f /dev/disk/wm-1)")
  state=\$(cat /sys/block/md0/md/dev-\$dev/state)
  case "\$state" in
    *write_mostly*failfast*|*failfast*write_mostly*)
      ok "wm: md sees member 1 (\$dev) as \$state" ;;
    *) fail "wm: member 1 (\$dev) state is \$state, not write_mostly,failfast" ;;
  esac
  dev0=\$(basename "\$(readlink -f /dev/disk/wm-0)")
  case "\$(cat /sys/block/md0/md/dev-\$dev0/state)" in
    *write_mostly*|*failfast*) fail "wm: member 0 is flagged too" ;;
  esac
  md_stop wm md0
fi
if md_create mdwm md1 --level=1 --raid-devices=2 --assume-clean \
     /dev/disk/mdwm-0 --write-mostly --failfast /dev/disk/mdwm-1; then
  ok "mdwm: created with member 1 write-mostly, failfast"
  md_stop mdwm md1
fi
EOF2
guest_run write-mostly "${disks[@]}" "$T/guest.sh"
grep -q '^FAIL' "$T/write-mostly.out" && die "md disagreed"

grep -q "Flags : write-mostly failfast" <<< "$("$NBDRAID" examine "$T/mdwm/d1.img")" ||
  die "nbdraid examine of md's write-mostly member: $("$NBDRAID" examine "$T/mdwm/d1.img")"
grep -q "Flags" <<< "$("$NBDRAID" examine "$T/mdwm/d0.img")" &&
  die "md's plain member shows a flag"
md_mirror_config mdwm "write-mostly failfast"
start_server "$conf"
status_is "j['devices'][1]['write_mostly'] and j['devices'][1]['failfast'] and not j['devices'][0]['write_mostly']" ||
  die "status of md's array: $(status_json)"
grep -q "go into the superblocks" "$T/nbdkit.log" &&
  die "md's flags were rewritten: $(cat "$T/nbdkit.log")"
stop_server
echo "ok: md honours nbdraid's write-mostly, nbdraid reads md's"
