#!/usr/bin/env bash
# scan = GLOB in [members], mdadm --assemble --scan's way: member lines
# whose path holds no device of the array (disks moved to other ports,
# files renamed) get the devices the globs find with the array's UUID,
# and the array serves its data; devices of other arrays are left
# alone; two arrays of the config's name with no line to tell them
# apart are refused in one line.
. "$(dirname "$0")/lib.sh"
requires nbdkit

new_array r5 5 left-symmetric 64K 4 8M --assume-clean
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
stop_server
rm -f "$sock" "$T/nbdkit.pid"

# Another array, another name, in the same place: a decoy.
new_array other 1 - - 2 8M --assume-clean
sed -i 's/^name = test/name = other/' "$T/other/a.conf"
"$NBDRAID" create --force --assume-clean "$T/other/a.conf" 2>> "$T/create.log" ||
  die "create other"
conf=$T/r5/a.conf

# Every disk moves and is renamed; two of the four lines still point
# at the old paths, one at the decoy's disk.
mkdir "$T/shelf"
for i in 0 1 2 3; do mv "$T/r5/d$i.img" "$T/shelf/disk-$((7 - i)).img"; done
mv "$T/other/d0.img" "$T/shelf/disk-9.img"
sed -i "s|^member = $T/r5/d2.img|member = $T/shelf/disk-9.img|" "$conf"
echo "scan = $T/shelf/disk-*.img" >> "$conf"
: > "$T/nbdkit.log"
start_server "$conf"
nbdcopy "$uri" "$T/back" && cmp "$T/data" "$T/back" || die "data differ"
status_is "j['working'] == 4" || die "$(status_json)"
[ "$(grep -c "holds no device of the array; the scan found" "$T/nbdkit.log")" = 4 ] ||
  die "not four lines found by scan: $(cat "$T/nbdkit.log")"
status_is "all('disk-9' not in d['path'] for d in j['devices'])" ||
  die "the decoy was used: $(status_json)"
stop_server
rm -f "$sock" "$T/nbdkit.pid"
echo "ok: moved and renamed members found by UUID; the decoy left alone"

# Two arrays named test in the scan, no line that holds either.
new_array twin 5 left-symmetric 64K 4 8M --assume-clean
for i in 0 1 2 3; do mv "$T/twin/d$i.img" "$T/shelf/disk-t$i.img"; done
conf=$T/r5/a.conf
awk -v t="$T" '/^member/ { print "member = " t "/gone" n++ ".img"; next } 1' \
  "$conf" > "$T/ambiguous.conf"
conf=$T/ambiguous.conf
if nbdkit -U "$(new_socket)" "$PLUGIN" "$conf" 2> "$T/err"; then
  die "an ambiguous scan started"
fi
grep -q "array test: scan found two arrays of that name: UUID .* and UUID .*; name the devices on member lines" "$T/err" ||
  die "ambiguous scan: $(cat "$T/err")"

# scan takes paths and globs only.
printf '[array]\nname = x\nlevel = 1\n[members]\nmember = a\nmember = b\nscan = nbd://host/x\n' > "$T/bad.conf"
if nbdkit -U "$(new_socket)" "$PLUGIN" "$T/bad.conf" 2> "$T/err"; then
  die "scan = URI accepted"
fi
grep -q "bad.conf:7: scan needs a path or a glob of paths" "$T/err" ||
  die "scan = URI: $(cat "$T/err")"
echo "ok: two arrays of one name refused; scan = URI refused"
