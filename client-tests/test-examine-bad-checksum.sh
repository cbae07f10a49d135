#!/usr/bin/env bash
# A member whose superblock has one byte changed behind md's back (its
# checksum now wrong): nbdraid examine still shows the superblock, as
# mdadm --examine does, every field as written and "Checksum : X -
# expected Y", in text and in JSON; it exits 1 with one line naming the
# member and the fault; the array still refuses to start with it.
. "$(dirname "$0")/lib.sh"
requires nbdkit
SBEDIT="/usr/bin/python3 $abs_top_srcdir/client-tests/sb-edit.py"

# field NAME FILE: a field of examine --json's first member
field () {
  /usr/bin/python3 -c 'import json, sys
print(json.load(open(sys.argv[2]))[0][sys.argv[1]])' "$1" "$2"
}

new_array c 5 left-symmetric 64K 3 8M --assume-clean
d=$T/c
"$NBDRAID" examine --json "$d/d1.img" > "$T/before.json"
uuid=$(field uuid "$T/before.json")
written=$(field checksum "$T/before.json")
# The same change with the checksum fixed (sb-edit's own arithmetic):
# the checksum the changed superblock should carry.
cp --sparse=always "$d/d1.img" "$T/fixed.img"
$SBEDIT "$T/fixed.img" 35 B 0x54 || die "sb-edit fixed.img"
"$NBDRAID" examine --json "$T/fixed.img" > "$T/fixed.json" ||
  die "examine of the fixed copy failed"
expected=$(field checksum "$T/fixed.json")
[ "$expected" != "$written" ] || die "the change left the checksum alone"
# The last letter of the name "test" becomes 'T'; sb_csum stays.
$SBEDIT "$d/d1.img" 35 B 0x54 --keep-csum || die "sb-edit d1.img"

fault="nbdraid: $d/d1.img: bad md superblock: sb_csum 0x$written is wrong (expected 0x$expected)"
if "$NBDRAID" examine "$d/d1.img" > "$T/out" 2> "$T/err"; then
  die "examine of a superblock with a wrong checksum exited 0"
fi
[ "$(cat "$T/err")" = "$fault" ] || die "stderr: $(cat "$T/err")"
for want in "Array UUID : $uuid" "Name : tesT" "Raid Level : raid5" \
            "Raid Devices : 3" "Device Role : Active device 1" \
            "Checksum : $written - expected $expected"; do
  grep -qF "$want" "$T/out" || die "examine lacks '$want': $(cat "$T/out")"
done
echo "ok: examine shows it: $(grep Checksum "$T/out" | sed 's/^ *//')"

if "$NBDRAID" examine --json "$d/d1.img" > "$T/out.json" 2> "$T/err"; then
  die "examine --json of a superblock with a wrong checksum exited 0"
fi
[ "$(cat "$T/err")" = "$fault" ] || die "stderr of --json: $(cat "$T/err")"
[ "$(field name "$T/out.json") $(field checksum "$T/out.json")" = \
  "tesT $written" ] && [ "$(field checksum_expected "$T/out.json")" = \
  "$expected" ] || die "examine --json: $(cat "$T/out.json")"
echo "ok: examine --json gives checksum $written, checksum_expected $expected"

# The sound members beside it are shown as ever.
"$NBDRAID" examine "$d"/d{0,1,2}.img > "$T/all" 2> "$T/err" && die "exit 0"
[ "$(grep -c "Array UUID : $uuid" "$T/all")" = 3 ] &&
  [ "$(grep -c -- "- correct" "$T/all")" = 2 ] &&
  [ "$(wc -l < "$T/err")" = 1 ] ||
  die "examine of three members: $(cat "$T/all" "$T/err")"
echo "ok: examine of all three shows each, one fault"

# mdadm prints the checksums without leading zeros.
if command -v mdadm > /dev/null; then
  mdadm --examine "$d/d1.img" > "$T/mdadm" 2>&1 || :
  grep -qF "Checksum : $(printf %x "0x$written") - expected $(printf %x "0x$expected")" "$T/mdadm" ||
    die "mdadm --examine sees otherwise: $(cat "$T/mdadm")"
  echo "ok: mdadm --examine agrees"
fi

if out=$(nbdkit -U "$(new_socket)" "$PLUGIN" "$conf" --run true 2>&1); then
  die "the array started with a member whose checksum is wrong"
fi
grep -qF "$d/d1.img (bad md superblock: sb_csum 0x$written is wrong" <<< "$out" ||
  die "nbdkit refused, but not for the checksum: $out"
echo "ok: the array still refuses it"
