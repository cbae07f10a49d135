#!/usr/bin/env bash
# nbdraid zero-superblock, as mdadm --zero-superblock: a member of an
# array being served is refused (the server holds a lock on it) and
# keeps its superblock; an idle member is wiped, after which nbdraid
# examine (and mdadm --examine, where installed) finds none; a device
# with no md superblock is refused.  Both reach a device by its NBD URI
# (within nbd-connect-timeout's default, which they use).
. "$(dirname "$0")/lib.sh"
requires nbdkit

new_array r1 1 - - 2 8M --assume-clean
start_server "$conf"
if out=$("$NBDRAID" zero-superblock "$T/r1/d0.img" 2>&1); then
  die "a served member was wiped: $out"
fi
grep -q "d0.img: in use by a running array" <<< "$out" || die "refused with: $out"
"$NBDRAID" examine "$T/r1/d0.img" > /dev/null ||
  die "the refused wipe touched the superblock"
stop_server

"$NBDRAID" zero-superblock "$T/r1/d0.img" || die "an idle member was not wiped"
if out=$("$NBDRAID" examine "$T/r1/d0.img" 2>&1); then
  die "examine still finds a superblock: $out"
fi
if command -v mdadm > /dev/null; then
  if out=$(mdadm --examine "$T/r1/d0.img" 2>&1); then
    die "mdadm --examine still finds one: $out"
  fi
fi
"$NBDRAID" examine "$T/r1/d1.img" > /dev/null || die "d1 was touched"

if out=$("$NBDRAID" zero-superblock "$T/r1/d0.img" 2>&1); then
  die "a device with no superblock was 'wiped': $out"
fi
grep -q "d0.img: no md v1.2 superblock to zero" <<< "$out" || die "$out"
echo "ok: zero-superblock refuses a served member, wipes an idle one"

start_member d1 "$T/r1/d1.img"
out=$("$NBDRAID" examine "$member_uri") || die "examine by URI: $out"
grep -q "Device Role : Active device 1" <<< "$out" || die "examine by URI: $out"
"$NBDRAID" zero-superblock "$member_uri" || die "zero-superblock by URI failed"
if out=$("$NBDRAID" examine "$T/r1/d1.img" 2>&1); then
  die "zero-superblock by URI left a superblock: $out"
fi
echo "ok: examine and zero-superblock reach a device by its NBD URI"
