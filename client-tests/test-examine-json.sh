#!/usr/bin/env bash
# nbdraid examine --json describes every member, and fails (exit 1, one
# line naming it) for a member without a superblock.  A RAID0 member as
# Linux md writes it (used size 0: md sizes RAID0 from the data area)
# gives the array's size as md does.  Like mdadm --examine it shows
# where the bitmap is, and the resync and recovery offsets when set.
. "$(dirname "$0")/lib.sh"
SBEDIT="/usr/bin/python3 $abs_top_srcdir/client-tests/sb-edit.py"

new_array a 6 right-symmetric 128K 5 8M --assume-clean
"$NBDRAID" examine --json "$T"/a/d*.img > "$T/out.json"
/usr/bin/python3 - "$T/out.json" <<'PY'
import json, sys
members = json.load(open(sys.argv[1]))
assert len(members) == 5, members
for i, m in enumerate(members):
    assert m["role"] == i and m["dev_number"] == i, m
    assert m["level"] == 6 and m["layout"] == "right-symmetric", m
    assert m["chunk_bytes"] == 131072 and m["raid_disks"] == 5, m
    assert m["state"] == "clean" and m["name"] == "test", m
    assert m["uuid"] == members[0]["uuid"], m
    assert m["array_bytes"] == 3 * m["size_sectors"] * 512, m
print("ok: json describes 5 members")
PY
# The offsets: a resync due from sector 2048, a recovery stopped at
# sector 4096 (feature bit 0x2), as md would have left them.
$SBEDIT "$T/a/d1.img" 8 I 3 || die "sb-edit feature_map"
$SBEDIT "$T/a/d1.img" 152 Q 4096 || die "sb-edit recovery_offset"
$SBEDIT "$T/a/d1.img" 208 Q 2048 || die "sb-edit resync_offset"
"$NBDRAID" examine "$T/a/d1.img" > "$T/d1.txt" || die "examine d1: $(cat "$T/d1.txt")"
for want in "Internal Bitmap : 8 sectors from superblock" \
            "Recovery Offset : 4096 sectors" "Resync Offset : 2048 sectors" \
            "State : active" "Array State : AAAAA ('A' == active, '.' == missing)"; do
  grep -q "$want" "$T/d1.txt" || die "examine lacks '$want': $(cat "$T/d1.txt")"
done
"$NBDRAID" examine --json "$T/a/d1.img" | /usr/bin/python3 -c '
import json, sys
m = json.load(sys.stdin)[0]
assert m["resync_offset_sectors"] == 2048 and m["recovery_offset_sectors"] == 4096, m
' || die "examine --json lacks the offsets"
# RAID0, 3 members: the data area of each, rounded down to the chunk.
new_array z 0 - 64K 3 8M --assume-clean
for d in "$T"/z/d*.img; do $SBEDIT "$d" 80 Q 0 || die "sb-edit $d"; done
"$NBDRAID" examine --json "$T"/z/d*.img > "$T/z.json"
/usr/bin/python3 - "$T/z.json" <<'PY'
import json, sys
members = json.load(open(sys.argv[1]))
for m in members:
    assert m["size_sectors"] == 0, m
    data = m["data_size_sectors"] * 512 // 65536 * 65536
    assert m["array_bytes"] == 3 * data and data > 0, m
print("ok: md's RAID0 member (size 0) gives array_bytes", members[0]["array_bytes"])
PY
grep -q "Array Size : $(( $(/usr/bin/python3 -c "import json; print(json.load(open('$T/z.json'))[0]['array_bytes'])") / 1024 )) KiB" <<< "$("$NBDRAID" examine "$T/z/d0.img")" ||
  die "examine's Array Size of md's RAID0 member: $("$NBDRAID" examine "$T/z/d0.img" | grep 'Array Size')"

truncate -s 1M "$T/blank.img"
if out=$("$NBDRAID" examine "$T/blank.img" 2>&1); then
  die "examine of a blank file succeeded"
fi
[ "$out" = "nbdraid: $T/blank.img: no md superblock (magic 0x00000000)" ] ||
  die "unexpected: $out"
echo "ok: $out"
