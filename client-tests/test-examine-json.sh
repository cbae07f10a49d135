#!/usr/bin/env bash
# nbdraid examine --json describes every member, and fails (exit 1, one
# line naming it) for a member without a superblock.
. "$(dirname "$0")/lib.sh"

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
truncate -s 1M "$T/blank.img"
if out=$("$NBDRAID" examine "$T/blank.img" 2>&1); then
  die "examine of a blank file succeeded"
fi
[ "$out" = "nbdraid: $T/blank.img: no md superblock (magic 0x00000000)" ] ||
  die "unexpected: $out"
echo "ok: $out"
