#!/usr/bin/env bash
# check and repair find which member holds wrong bytes.  RAID6: bytes
# flipped in one chunk of each of six stripes, each member once and
# data, P and Q among them: check names every stripe and member from
# the two syndromes; repair restores that member's bytes (data read back
# as written, which md's repair, recomputing parity over the bad data,
# would not give); a second check finds nothing.  Two wrong chunks in
# one stripe are reported as on no one member, and repaired md's way.
# Three-copy mirrors (RAID1 of 3, RAID10 n3): a wrong copy, the first
# among them, is outvoted and rewritten.  A RAID6 missing a member still
# finds a wrong chunk, without naming it; a member found wrong past
# scrub-fail-after is failed; RAID0 has nothing to check.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

# corrupt FILE OFFSET: flip 100 bytes from OFFSET (within one 4K page)
corrupt () {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(100)
    f.seek(int(sys.argv[2])); f.write(bytes(x ^ 0x5a for x in b))
PY
}

# data_offset FILE: the member's data offset in bytes (superblock)
data_offset () {
  /usr/bin/python3 -c '
import struct, sys
with open(sys.argv[1], "rb") as f:
    f.seek(4096 + 128)
    print(struct.unpack("<Q", f.read(8))[0] * 512)' "$1"
}

# run_check VERB: start it, wait for it to end
run_check () {
  "$NBDRAID" "$1" "$conf" > /dev/null || die "$1 refused"
  wait_status 60 "j['job']['kind'] == 'idle'"
}

# raid6_targets LAYOUT: "stripe role kind" for roles 0..5, the kind of
# chunk (data, P, Q) going round, each in a stripe of its own where the
# role holds that kind (md-model.py's placement).
raid6_targets () {
  /usr/bin/python3 - "$abs_top_srcdir/client-tests" "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
md = __import__("md-model")
layout = int(sys.argv[2])
used = set()
for role in range(6):
    kind = ("data", "P", "Q")[role % 3]
    s = 10 * role
    while True:
        st = md.raid6_stripe(s, 6, layout)
        k = "P" if st.p == role else "Q" if st.q == role else "data"
        if k == kind and s not in used:
            break
        s += 1
    used.add(s)
    print(s, role, kind)
PY
}

raid6_case () {
  local name=$1 layout=$2 lnum=$3 s role kind off
  new_array "$name" 6 "$layout" 64K 6 8M --assume-clean
  start_server "$conf"
  random_file "$T/$name.data" "$(export_size)"
  nbdcopy --flush "$T/$name.data" "$uri"
  off=$(data_offset "$T/$name/d0.img")
  raid6_targets "$lnum" > "$T/$name.targets"
  while read -r s role kind; do
    corrupt "$T/$name/d$role.img" $((off + s * 65536 + 8192 + 300))
  done < "$T/$name.targets"
  # Two data chunks of stripe 70 wrong at the same page: no one member.
  /usr/bin/python3 - "$abs_top_srcdir/client-tests" "$lnum" > "$T/$name.pair" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
st = __import__("md-model").raid6_stripe(70, 6, int(sys.argv[2]))
print(st.data[0], st.data[1])
PY
  read -r d0 d1 < "$T/$name.pair"
  corrupt "$T/$name/d$d0.img" $((off + 70 * 65536 + 4096))
  corrupt "$T/$name/d$d1.img" $((off + 70 * 65536 + 4096 + 500))

  run_check check
  status_is "j['mismatches'] == 56 and j['unlocated'] == 8" ||
    die "$name: check: $(status_json)"
  status_is "all(d['mismatched_sectors'] == 8 for d in j['devices'][:6])" ||
    die "$name: check did not name each member once: $(status_json)"
  while read -r s role kind; do
    grep -q "check: stripe $s: 8 sectors wrong on member $role " \
      "$T/nbdkit.log" ||
      die "$name: no log line for stripe $s, member $role ($kind)"
  done < "$T/$name.targets"
  grep -q "check: stripe 70: 8 sectors disagree, on no one member" \
    "$T/nbdkit.log" || die "$name: stripe 70 not reported as unlocated"

  run_check repair
  status_is "j['mismatches'] == 56 and j['unlocated'] == 8" ||
    die "$name: repair: $(status_json)"
  run_check check
  status_is "j['mismatches'] == 0" ||
    die "$name: mismatches left after repair: $(status_json)"
  nbdcopy "$uri" "$T/$name.out"
  stop_server
  # Every located chunk reads back as written; stripe 70's two data
  # chunks could not be told apart, and keep what they held.
  /usr/bin/python3 - "$T/$name.data" "$T/$name.out" <<'PY' ||
import sys
a = open(sys.argv[1], "rb").read()
b = open(sys.argv[2], "rb").read()
stripe = 4 * 65536
bad = [i for i in range(0, len(a), stripe) if a[i:i + stripe] != b[i:i + stripe]]
sys.exit(0 if bad == [70 * stripe] else 1)
PY
    die "$name: data other than stripe 70's differs after repair"
  # shellcheck disable=SC2086
  $MODEL check $members > "$T/check.out" ||
    die "$name: P/Q wrong after repair: $(cat "$T/check.out")"
  echo "ok: $name: check located data, P and Q on each member; repair restored them"
}

raid6_case r6ls left-symmetric 2
raid6_case r6ra right-asymmetric 1

# copies_case NAME LEVEL LAYOUT CHUNK N: three copies of everything; the
# first copy (member 0) of array unit 0 is wrong, and outvoted.
copies_case () {
  local name=$1 off
  new_array "$name" "$2" "$3" "$4" "$5" 8M --assume-clean
  start_server "$conf"
  random_file "$T/$name.data" "$(export_size)"
  nbdcopy --flush "$T/$name.data" "$uri"
  off=$(data_offset "$T/$name/d0.img")
  corrupt "$T/$name/d0.img" $((off + 300))
  run_check check
  status_is "j['mismatches'] == 8 and j['unlocated'] == 0 and j['devices'][0]['mismatched_sectors'] == 8" ||
    die "$name: check: $(status_json)"
  run_check repair
  run_check check
  status_is "j['mismatches'] == 0" || die "$name: left after repair: $(status_json)"
  nbdcopy "$uri" "$T/$name.out"
  cmp "$T/$name.data" "$T/$name.out" || die "$name: the wrong copy won"
  stop_server
  check_members_hold "$T/$name.data"
  echo "ok: $name: the wrong first copy was outvoted and rewritten"
}

copies_case r1x3 1 - - 3
copies_case r10n3 10 n3 64K 3

# Degraded RAID6 (member 5 failed): one syndrome is left, so a check
# still finds a wrong chunk but cannot say where; repair is refused.
new_array r6deg 6 left-symmetric 64K 6 8M --assume-clean
start_server "$conf"
random_file "$T/r6deg.data" "$(export_size)"
nbdcopy --flush "$T/r6deg.data" "$uri"
"$NBDRAID" fail "$conf" 5 > /dev/null || die "r6deg: fail refused"
off=$(data_offset "$T/r6deg/d2.img")
corrupt "$T/r6deg/d2.img" $((off + 3 * 65536 + 300))
run_check check
status_is "j['mismatches'] == 8 and j['unlocated'] == 8 and all(d['mismatched_sectors'] == 0 for d in j['devices'])" ||
  die "r6deg: degraded check: $(status_json)"
if out=$("$NBDRAID" repair "$conf" 2>&1); then die "r6deg: repair ran degraded"; fi
grep -q "array test is degraded: repair needs every member" <<< "$out" ||
  die "r6deg: repair refused with: $out"
stop_server
echo "ok: r6deg: a degraded RAID6's check finds the wrong chunk, repair waits"

# scrub-fail-after: a member that checks found 24 sectors wrong on,
# past a threshold of 16, is failed; the array reads right without it.
new_array r6sfa 6 left-symmetric 64K 6 8M --assume-clean
echo "scrub-fail-after = 16" > "$T/sfa.conf"
sed -i '/^\[array\]/r '"$T/sfa.conf" "$conf"
start_server "$conf"
random_file "$T/r6sfa.data" "$(export_size)"
nbdcopy --flush "$T/r6sfa.data" "$uri"
off=$(data_offset "$T/r6sfa/d2.img")
for s in 4 9 17; do
  corrupt "$T/r6sfa/d2.img" $((off + s * 65536 + 300))
done
run_check check
status_is "j['devices'][2]['state'] == 'faulty' and 'scrub-fail-after = 16' in j['devices'][2]['why'] and j['working'] == 5" ||
  die "r6sfa: member 2 was not failed: $(status_json)"
nbdcopy "$uri" "$T/r6sfa.out"
cmp "$T/r6sfa.data" "$T/r6sfa.out" || die "r6sfa: reads wrong without member 2"
stop_server
echo "ok: r6sfa: scrub-fail-after failed the member with 24 bad sectors"

# RAID0 has nothing to check against.
new_array r0 0 - 64K 2 8M
start_server "$conf"
for verb in check repair; do
  if out=$("$NBDRAID" $verb "$conf" 2>&1); then die "r0: $verb ran"; fi
  grep -q "array test is RAID0: no redundancy to $verb" <<< "$out" ||
    die "r0: $verb refused with: $out"
done
stop_server
echo "ok: check and repair refused on RAID0"

# Client writes under fio --verify while a repair and a check run: the
# stripe locks keep them apart; fio sees its data, the check nothing.
if fio --enghelp 2>/dev/null | grep -qw nbd; then
  new_array r6fio 6 left-symmetric 64K 6 8M --assume-clean
  start_server "$conf"
  fio --name=scrub --ioengine=nbd --uri="$uri" --rw=randwrite --bs=16k \
    --iodepth=8 --size="$(export_size)" --verify=crc32c \
    --verify_state_save=0 --do_verify=1 --verify_fatal=1 --rate_iops=600 \
    --output="$T/fio.out" > /dev/null 2>&1 &
  fio_pid=$!
  cleanup_fn "kill $fio_pid 2>/dev/null"
  run_check repair
  run_check check
  wait "$fio_pid" || { cat "$T/fio.out"; die "fio failed under check"; }
  grep -q "err= 0" "$T/fio.out" || die "fio errors under check"
  run_check check
  status_is "j['mismatches'] == 0" ||
    die "client writes left mismatches: $(status_json)"
  stop_server
  echo "ok: fio --verify under repair and check"
fi
