#!/usr/bin/env bash
# Linux md reads what nbdraid wrote: arrays of every level and layout,
# with and without a write-intent bitmap, created by nbdraid and filled
# with seeded data through NBD, are assembled by md in a guest; md's
# check finds no mismatch, the array holds the data, mdadm -X reads the
# bitmap, and assembled with one member left out (--run) md still reads
# the data.  One guest boot for all of them.
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
r5rs 5 right-symmetric 64K 4
r6la 6 left-asymmetric 64K 5
r6ra 6 right-asymmetric 64K 5
r6ls 6 left-symmetric 32K 5
r6rs 6 right-symmetric 64K 5
r4 4 - 64K 4
r5pl 5 parity-last 64K 3
r6pf 6 parity-first 64K 5
r6pf6 6 parity-first-6 64K 5
r10n2 10 n2 64K 4
r10n3 10 n3 64K 4
r10f2 10 f2 64K 4
r10o2 10 o2 64K 3"

disks=() table=""
while read -r name level layout chunk n; do
  for bitmap in none 1M; do
    [ "$level" = 0 ] && [ "$bitmap" != none ] && continue
    a=$name-${bitmap/none/nb}
    a=${a/-1M/-bm}
    interop_config "$T/$a" "$level" "$layout" "$chunk" "$n" 8M "$bitmap"
    "$NBDRAID" create "$conf" 2>> "$T/create.log" ||
      { cat "$T/create.log" >&2; die "nbdraid create $a failed"; }
    start_server "$conf"
    wait_status 60 'j["synced"] and j["job"]["kind"] == "idle"'
    size=$(export_size)
    seeded_data "$T/data" "$size" "$a"
    nbdcopy --connections=4 --flush "$T/data" "$uri"
    stop_server
    table+="$a $level $n $size $(md5 "$T/data") ${bitmap/1M/1 MB}"$'\n'
    mapfile -t -O ${#disks[@]} disks < <(disk_args "$a" "$T/$a" "$n")
  done
done <<< "$specs"
echo "created and filled $(echo -n "$table" | wc -l) arrays"

guest_script "$T/guest.sh" <<EOF2
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
  [ \$level = 0 ] && continue
  leave=\$((k % n))
  if ! out=\$(mdadm --assemble --run /dev/\$md \$(members \$a \$n \$leave) 2>&1); then
    fail "\$a: degraded mdadm --assemble --run: \$out"
    continue
  fi
  grep -q "^\$md : active" /proc/mdstat || fail "\$a: degraded array not active"
  md_holds "\$a without member \$leave" /dev/\$md \$size \$sum
  mdadm --stop /dev/\$md > /dev/null 2>&1 || fail "\$a: mdadm --stop"
done <<'TABLE'
$table
TABLE
EOF2
guest_run nbdraid-to-md "${disks[@]}" "$T/guest.sh"
grep -q '^FAIL' "$T/nbdraid-to-md.out" && die "md disagreed"
echo "ok: md assembles, checks and reads every array nbdraid made"

# The owner record nbdraid keeps beside each superblock (multi-host
# protection) lies where md neither reads nor writes: after md
# assembled, checked and stopped the arrays, it still says nbdraid
# stopped cleanly, and nbdraid serves the array again without watching
# for a live owner.
a=r5ls-bm
grep -q "Owner : host $(hostname), pid [0-9]*, stopped" \
  <<< "$("$NBDRAID" examine "$T/$a/d0.img")" ||
  die "$a: the owner record did not survive md: $("$NBDRAID" examine "$T/$a/d0.img")"
: > "$T/nbdkit.log"
start_server "$T/$a/a.conf"
grep -q "watching its heartbeat" "$T/nbdkit.log" &&
  die "$a: a live owner was watched for: $(cat "$T/nbdkit.log")"
stop_server
echo "ok: the owner record survives md's superblock writes"
