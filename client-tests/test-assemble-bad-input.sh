#!/usr/bin/env bash
# nbdkit raid refuses to serve members that do not form the configured
# array, or an array with members missing unless degraded=true, with one
# clear line naming the member or config line, and writes nothing to any
# member.
. "$(dirname "$0")/lib.sh"
requires nbdkit

SBEDIT="/usr/bin/python3 $abs_top_srcdir/client-tests/sb-edit.py"
new_array a 5 left-symmetric 64K 4 4M --assume-clean
d=$T/a
new_array b 5 left-symmetric 64K 4 4M --assume-clean
snapshot () { cat "$d"/*.img "$T"/b/*.img | sha256sum; }

# expect_refusal DESCRIPTION EXPECTED-TEXT [PARAMS]: serve $d/x.conf,
# which must fail
expect_refusal () {
  local what=$1 want=$2 before out
  shift 2
  before=$(snapshot)
  if out=$(nbdkit -U "$(new_socket)" "$PLUGIN" "$d/x.conf" "$@" --run true 2>&1); then
    die "$what: nbdkit served it"
  fi
  out=$(printf '%s\n' "$out" | grep 'error:') || die "$what: no error: $out"
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || die "$what: not one line: $out"
  case $out in
    *"$want"*) echo "ok: $what: $out" ;;
    *) die "$what: expected '$want', got: $out" ;;
  esac
  [ "$(snapshot)" = "$before" ] || die "$what: a member was modified"
}

# x.conf from a.conf with a sed expression applied
variant () { sed "$1" "$d/a.conf" > "$d/x.conf"; }

variant "s|$d/d1.img|$T/b/d1.img|"
expect_refusal "member of another array" "$T/b/d1.img belongs to array"

cp "$d/d0.img" "$d/copy.img"
variant "s|$d/d3.img|$d/copy.img|"
expect_refusal "two members claiming one role" "$d/d0.img and $d/copy.img both claim role 0 of array test"
rm "$d/copy.img"

variant "s|chunk = 64K|chunk = 128K|"
expect_refusal "chunk disagrees" "$d/x.conf:6: chunk is 128K but the superblocks say 64K"
variant "s|layout = left-symmetric|layout = right-symmetric|"
expect_refusal "layout disagrees" "$d/x.conf:5: layout is right-symmetric but the superblocks say left-symmetric"
variant "s|level = 5|level = 6|"
expect_refusal "level disagrees" "$d/x.conf:4: level is 6 but the superblocks say RAID5"
variant "/d3.img/d"
expect_refusal "member missing from the config" "lists 3 members but the superblocks say the array has 4"

truncate -s 4M "$d/blank.img"
variant "s|$d/d3.img|$d/blank.img|"
expect_refusal "member without a superblock" "array test: 1 member is missing: $d/blank.img (no md superblock); to start it degraded anyway, pass degraded=true (like mdadm --run)"
rm "$d/blank.img"

# One event behind is current (a crash between two members' superblock
# writes leaves that), as md and mdadm take it; two behind is stale.
variant ""
$SBEDIT "$d/d2.img" 200 Q 0
nbdkit -U "$(new_socket)" "$PLUGIN" "$d/x.conf" readonly=true --run 'nbdinfo "$uri"' \
  > "$T/one-behind.out" 2>&1 ||
  die "one event behind refused: $(cat "$T/one-behind.out")"
grep -q stale "$T/one-behind.out" && die "one event behind called stale"
for i in 0 1 3; do $SBEDIT "$d/d$i.img" 200 Q 2; done
expect_refusal "stale member" "$d/d2.img (stale: events 0, the array is at 2; needs recovery)"
for i in 0 1 2 3; do $SBEDIT "$d/d$i.img" 200 Q 1; done

variant "s|$d/d3.img|nbd+unix:///?socket=$T/nosuch.sock|"
expect_refusal "unreachable NBD member" "array test: 1 member is missing: nbd+unix:///?socket=$T/nosuch.sock (nbd_aio_connect_uri: connect: No such file or directory); to start it degraded anyway"

variant "s|$d/d1.img|$d/gone1.img|; s|$d/d3.img|$d/gone3.img|"
expect_refusal "degraded beyond tolerance" "array test cannot start: 2 of 4 members unavailable, more than RAID5 can lose: $d/gone1.img (open: No such file or directory); $d/gone3.img (open: No such file or directory)" degraded=true

variant ""
$SBEDIT "$d/d1.img" 100 I 5 --keep-csum
expect_refusal "corrupt superblock" "$d/d1.img (bad md superblock: sb_csum"
$SBEDIT "$d/d1.img" 100 I 0        # new_level back, checksum right

# md metadata nbdraid does not read is named, by nbdkit and by create
# (which must not write over it): v1.0 keeps its superblock 8 KiB before
# the end of the device, v0.90 in the last 64 KiB-aligned 64 KiB.
cp "$d/d1.img" "$T/keep.img"
size=$(stat -c %s "$d/d1.img")
dd if="$T/keep.img" of="$d/d1.img" bs=4096 skip=1 count=1 \
   seek=$(( ((size / 512 - 16) & ~7) / 8 )) conv=notrunc status=none
dd if=/dev/zero of="$d/d1.img" bs=4096 seek=1 count=1 conv=notrunc status=none
variant ""
expect_refusal "md v1.0 metadata" "$d/d1.img (md v1.0 metadata (superblock at the end of the device) is not supported; nbdraid reads md v1.2 only)"
truncate -s 4M "$T/blank.img"
printf '[array]\nname = other\nlevel = 1\n[members]\nmember = %s\nmember = %s\n' \
  "$T/blank.img" "$d/d1.img" > "$T/other.conf"
before=$(sha256sum < "$d/d1.img")
"$NBDRAID" create "$T/other.conf" > "$T/create.out" 2>&1 &&
  die "nbdraid create wrote over md v1.0 metadata"
grep -q "md v1.0 metadata" "$T/create.out" ||
  die "create did not name md v1.0 metadata: $(cat "$T/create.out")"
[ "$(sha256sum < "$d/d1.img")" = "$before" ] || die "create wrote over v1.0"
cp "$T/keep.img" "$d/d1.img"
dd if=/dev/zero of="$d/d1.img" bs=4096 seek=1 count=1 conv=notrunc status=none
printf '\xfc\x4e\x2b\xa9\x00\x00\x00\x00' |
  dd of="$d/d1.img" bs=1 seek=$(( (size & ~0xffff) - 0x10000 )) conv=notrunc status=none
expect_refusal "md v0.90 metadata" "$d/d1.img (md v0.90 metadata (superblock at the end of the device) is not supported; nbdraid reads md v1.2 only)"
cp "$T/keep.img" "$d/d1.img"
echo "ok: md v1.0 and v0.90 metadata named, and create leaves them alone"
