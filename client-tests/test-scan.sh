#!/usr/bin/env bash
# nbdraid scan finds md arrays by their superblocks and prints configs
# that serve them again after the member files were renamed and moved:
# a RAID1, a RAID5 and a RAID6 shuffled into one directory, among files
# that are not members, read back byte for byte from the configs scan
# printed (in name order, members in role order); a glob finds the
# same; --json says the same.  A member removed gives "member = missing"
# and degraded=true serves the rest; the stale copy of a member that
# was failed and re-added is left in a comment and the fresh one used;
# a failed member is commented as faulty, and a removed one whose device
# number a new spare took as stale, not as a spare.  A RAID50's groups
# come out as [array gN] sections of its config; two arrays of one name
# are both printed, with a warning naming their UUIDs; an NBD URI is
# scanned as given; a damaged superblock gets one line on stderr.  No
# arguments is a usage error (2), no array found exits 1.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdsh
SBEDIT="/usr/bin/python3 $abs_top_srcdir/client-tests/sb-edit.py"

# make_array DIR NAME LEVEL LAYOUT CHUNK N: N members DIR/dI.img of 8M
# in array NAME, created; "-" omits layout or chunk
make_array () {
  named_array "$1/a.conf" "$2" "$1" "$3" "$4" "$5" "$6" 8M
}

# fill CONF NAME: random data into the array, kept as $T/NAME.data
fill () {
  start_server "$1"
  random_file "$T/$2.data" "$(export_size)"
  nbdcopy "$T/$2.data" "$uri"
  stop_server
}

# scan_split OUT ARGS...: nbdraid scan ARGS, its output in OUT/scan.out
# (stderr OUT/scan.err), split into one config per array, OUT/NAME.conf,
# each with a control socket of its own (scan prints none).
scan_split () {
  local out=$1 f name rc=0
  shift
  mkdir -p "$out"
  timeout 60 "$NBDRAID" scan "$@" > "$out/scan.out" 2> "$out/scan.err" ||
    rc=$?
  [ "$rc" = 0 ] || die "nbdraid scan $*: exit $rc: $(cat "$out/scan.err")"
  awk -v dir="$out" '/^\[array\]$/ { n++ } n { print > (dir "/part" n) }' \
    "$out/scan.out"
  for f in "$out"/part*; do
    name=$(sed -n 's/^name = //p' "$f")
    [ -n "$name" ] || die "a config without a name: $(cat "$f")"
    sed "/^\[array\]$/a socket = $out/$name.sock" "$f" > "$out/$name.conf"
    rm "$f"
  done
}

# members_of CONF: its member lines' paths (or "missing"), in order
members_of () {
  sed -n 's/^member = //p' "$1"
}

# check_roles CONF N: N member lines, each device's own superblock
# giving it the role of its line
check_roles () {
  local i=0 path role
  while read -r path; do
    if [ "$path" != missing ]; then
      role=$("$NBDRAID" examine --json "$path" | /usr/bin/python3 -c \
               'import json, sys; print(json.load(sys.stdin)[0]["role"])')
      [ "$role" = "$i" ] || die "$1: line $i is $path, of role $role"
    fi
    i=$((i + 1))
  done < <(members_of "$1")
  [ "$i" = "$2" ] || die "$1 lists $i members, not $2: $(cat "$1")"
}

# reads_back CONF NAME [PARAMS]: served from CONF, the array reads back
# as $T/NAME.data
reads_back () {
  local conf=$1 name=$2
  shift 2
  start_server "$conf" "$@"
  nbdcopy "$uri" "$T/$name.out"
  stop_server
  cmp "$T/$name.data" "$T/$name.out" || die "$name: reads back different data"
  rm -f "$T/$name.out"
}

# ---- usage and nothing found ---------------------------------------
rc=0
out=$("$NBDRAID" scan 2>&1) || rc=$?
[ "$rc" = 2 ] && grep -q '^usage: nbdraid scan ' <<< "$out" ||
  die "scan without arguments: exit $rc: $out"
mkdir "$T/nothing"
echo notes > "$T/nothing/notes.txt"
truncate -s 8M "$T/nothing/zeros.img"
rc=0
"$NBDRAID" scan "$T/nothing" > "$T/none.out" 2> "$T/none.err" || rc=$?
[ "$rc" = 1 ] && [ ! -s "$T/none.out" ] && [ "$(wc -l < "$T/none.err")" = 1 ] &&
  grep -q "no md array found on the 2 devices scanned" "$T/none.err" ||
  die "scan of no array: exit $rc: $(cat "$T/none.out" "$T/none.err")"
echo "ok: no arguments is a usage error (2), no array found exits 1"

# ---- three arrays, members renamed and moved -----------------------
make_array "$T/old/r1" mirror 1 - - 2
make_array "$T/old/r5" parity 5 left-symmetric 64K 4
make_array "$T/old/r6" archive 6 left-asymmetric 32K 5
fill "$T/old/r1/a.conf" mirror
fill "$T/old/r5/a.conf" parity
fill "$T/old/r6/a.conf" archive
m=$T/moved
mkdir -p "$m/subdir"
k=0
while read -r f; do
  mv "$f" "$m/disk-$(printf %02d $k).img"
  k=$((k + 1))
done < <(/usr/bin/python3 -c '
import random, sys
files = sys.argv[1:]
random.Random(7).shuffle(files)
print("\n".join(files))' "$T"/old/*/d*.img)
# Beside them: files of no array, a FIFO (opening it would hang), and a
# member's copy in a subdirectory, which is not looked into.
echo notes > "$m/notes.txt"
truncate -s 8M "$m/zeros.img"
head -c 1M /dev/urandom > "$m/random.img"
head -c 100 /dev/urandom > "$m/tiny"
mkfifo "$m/fifo"
cp "$m/disk-00.img" "$m/subdir/"

s=$T/s1
scan_split "$s" "$m"
[ ! -s "$s/scan.err" ] || die "scan of the directory said: $(cat "$s/scan.err")"
[ "$(sed -n 's/^name = //p' "$s/scan.out" | tr '\n' ' ')" = \
  "archive mirror parity " ] || die "not three configs in name order: $(cat "$s/scan.out")"
grep -v '^# uuid ' "$s/scan.out" | grep -q -e subdir -e '^socket' -e '^#' &&
  die "unexpected lines: $(cat "$s/scan.out")"
grep -qx 'layout = left-asymmetric' "$s/archive.conf" &&
  grep -qx 'chunk = 32K' "$s/archive.conf" &&
  grep -qx 'layout = left-symmetric' "$s/parity.conf" &&
  grep -qx 'chunk = 64K' "$s/parity.conf" &&
  ! grep -q -e '^layout' -e '^chunk' "$s/mirror.conf" &&
  grep -qx 'level = 1' "$s/mirror.conf" ||
  die "level, layout or chunk wrong: $(cat "$s/scan.out")"
check_roles "$s/mirror.conf" 2
check_roles "$s/parity.conf" 4
check_roles "$s/archive.conf" 5
for name in mirror parity archive; do
  reads_back "$s/$name.conf" $name
done
echo "ok: a RAID1, a RAID5 and a RAID6 moved and renamed serve the same data"

# A glob the shell did not expand finds the same, and --json says it.
scan_split "$T/s-glob" "$m/disk-*.img"
cmp "$s/scan.out" "$T/s-glob/scan.out" ||
  die "the glob found other configs: $(cat "$T/s-glob/scan.out")"
"$NBDRAID" scan --json "$m" > "$T/scan.json" || die "scan --json failed"
/usr/bin/python3 - "$T/scan.json" "$s" <<'PY' || die "json: $(cat "$T/scan.json")"
import json, re, sys
arrays = json.load(open(sys.argv[1]))
assert [a["name"] for a in arrays] == ["archive", "mirror", "parity"], arrays
want = {"archive": (6, "left-asymmetric", 32768), "mirror": (1, None, 0),
        "parity": (5, "left-symmetric", 65536)}
for a in arrays:
    conf = open(f"{sys.argv[2]}/{a['name']}.conf").read()
    assert a["uuid"] == re.search(r"^# uuid (\S+)$", conf, re.M)[1], a
    assert (a["level"], a["layout"], a["chunk_bytes"]) == want[a["name"]], a
    assert a["members"] == re.findall(r"^member = (.*)$", conf, re.M), a
    assert a["spares"] == a["stale"] == a["faulty"] == [], a
    assert not a["degraded"] and a["nested_in"] is None, a
PY
echo "ok: a glob finds the same arrays, and --json describes them"

# ---- a member removed ----------------------------------------------
gone=$(members_of "$s/parity.conf" | sed -n 3p)
mv "$gone" "$T/gone.img"
scan_split "$T/s2" "$m"
[ "$(members_of "$T/s2/parity.conf" | sed -n 3p)" = missing ] &&
  grep -q '^# role 2: no device found, and the superblocks expect one: serve with degraded=true$' \
    "$T/s2/parity.conf" || die "no missing role 2: $(cat "$T/s2/parity.conf")"
! nbdkit -U "$(new_socket)" "$PLUGIN" "$T/s2/parity.conf" --run true \
  2> "$T/refused.log" || die "served without degraded=true"
"$NBDRAID" scan --json "$m" | /usr/bin/python3 -c '
import json, sys
a = [a for a in json.load(sys.stdin) if a["name"] == "parity"][0]
assert a["degraded"] and a["members"][2] is None, a' ||
  die "json does not show parity degraded"
reads_back "$T/s2/parity.conf" parity degraded=true
mv "$T/gone.img" "$gone"
echo "ok: a member removed: member = missing, served with degraded=true"

# ---- a stale copy beside the fresh device ---------------------------
# Member 1 of the mirror fails, more is written, a copy of it is kept
# (named to be scanned first), and it is re-added and recovered.
conf=$s/mirror.conf
m1=$(members_of "$conf" | sed -n 2p)
start_server "$conf"
"$NBDRAID" fail "$conf" 1 > /dev/null || die "fail refused"
write_piece "$T/mirror.data" 1048576
cp "$m1" "$m/aa-stale.img"
"$NBDRAID" re-add "$conf" "$m1" > /dev/null || die "re-add refused"
"$NBDRAID" wait "$conf" || die "wait failed"
stop_server
scan_split "$T/s3" "$m"
[ "$(members_of "$T/s3/mirror.conf" | sed -n 2p)" = "$m1" ] &&
  grep -q "^# stale: $m/aa-stale.img (events [0-9]*, [0-9]* expected)$" \
    "$T/s3/mirror.conf" &&
  [ "$(grep -c aa-stale "$T/s3/mirror.conf")" = 1 ] ||
  die "the stale copy was not left out: $(cat "$T/s3/mirror.conf")"
reads_back "$T/s3/mirror.conf" mirror
echo "ok: a stale copy is a comment, the fresh device the member"

# ---- a failed member ------------------------------------------------
conf=$s/archive.conf
m2=$(members_of "$conf" | sed -n 3p)
start_server "$conf"
"$NBDRAID" fail "$conf" 2 > /dev/null || die "fail refused"
write_piece "$T/archive.data" 2097152
stop_server
scan_split "$T/s4" "$m"
[ "$(members_of "$T/s4/archive.conf" | sed -n 3p)" = missing ] &&
  grep -q "^# role 2: its device failed, as the superblocks record$" \
    "$T/s4/archive.conf" &&
  grep -q "^# faulty: $m2 (events [0-9]*, [0-9]* expected)$" \
    "$T/s4/archive.conf" || die "failed member: $(cat "$T/s4/archive.conf")"
reads_back "$T/s4/archive.conf" archive
echo "ok: a failed member is a comment, its role missing"

# ---- removed members whose device numbers new devices took ----------
# The failed member's role is rebuilt onto a new device; another member
# fails onto a new spare and is removed; a third new device is added.
# md gives new devices free device numbers, the removed members' among
# them: a removed member is then stale, never a spare.
conf=$T/s4/archive.conf
for i in 1 2 3; do truncate -s 8M "$m/new$i.img"; done
old1=$(members_of "$conf" | sed -n 2p)
start_server "$conf"
"$NBDRAID" add "$conf" "$m/new1.img" > /dev/null || die "add new1 refused"
"$NBDRAID" wait "$conf" || die "wait failed"
"$NBDRAID" add "$conf" "$m/new2.img" > /dev/null || die "add new2 refused"
"$NBDRAID" fail "$conf" 1 > /dev/null || die "fail refused"
"$NBDRAID" wait "$conf" || die "wait failed"
"$NBDRAID" remove "$conf" "$old1" > /dev/null || die "remove refused"
"$NBDRAID" add "$conf" "$m/new3.img" > /dev/null || die "add new3 refused"
write_piece "$T/archive.data" 3145728
stop_server
dev_number () {
  "$NBDRAID" examine --json "$1" | /usr/bin/python3 -c \
    'import json, sys; print(json.load(sys.stdin)[0]["dev_number"])'
}
[ "$(dev_number "$m/new3.img")" = "$(dev_number "$old1")" ] ||
  die "new3 did not get the removed member's device number"
scan_split "$T/s5" "$m"
c=$T/s5/archive.conf
[ "$(members_of "$c" | sed -n 2,3p | tr '\n' ' ')" = "$m/new2.img $m/new1.img " ] &&
  [ "$(grep '^spare = ' "$c")" = "spare = $m/new3.img" ] &&
  grep -q "^# stale: $old1 (events [0-9]*, [0-9]* expected)$" "$c" &&
  grep -q "^# stale: $m2 (events [0-9]*, [0-9]* expected)$" "$c" ||
  die "removed members: $(cat "$c")"
check_roles "$c" 5
reads_back "$c" archive
echo "ok: a removed member whose device number a spare took is stale"

# ---- a damaged superblock --------------------------------------------
mkdir "$T/dmg"
cp "$m1" "$T/dmg/good.img"
cp "$m1" "$T/dmg/bad.img"
$SBEDIT "$T/dmg/bad.img" 200 Q 12345 --keep-csum > /dev/null ||
  die "sb-edit failed"
scan_split "$T/s6" "$T/dmg"
[ "$(wc -l < "$T/s6/scan.err")" = 1 ] &&
  grep -q "^nbdraid: $T/dmg/bad.img: bad md superblock: sb_csum .*; skipped$" "$T/s6/scan.err" ||
  die "damaged superblock: $(cat "$T/s6/scan.err")"
grep -q "^member = $T/dmg/good.img$" "$T/s6/mirror.conf" &&
  ! grep -q bad.img "$T/s6/scan.out" || die "$(cat "$T/s6/scan.out")"
echo "ok: a damaged superblock: one line on stderr, the device skipped"

# ---- nested: RAID0 over two RAID5 groups -----------------------------
n=$T/n50
mkdir -p "$n"
{
  printf '[array]\nname = stack\nsocket = %s\nlevel = 0\nchunk = 64K\n' \
    "$n/top.sock"
  printf '[members]\nmember = array:g0\nmember = array:g1\n'
  for g in 0 1; do
    printf '[array g%s]\nlevel = 5\nchunk = 32K\n[members g%s]\n' "$g" "$g"
    for i in 0 1 2; do
      truncate -s 8M "$n/g$g-d$i.img"
      echo "member = g$g-d$i.img"
    done
  done
} > "$n/a.conf"
"$NBDRAID" create --assume-clean "$n/a.conf" 2>> "$T/create.log" ||
  die "nested create: $(cat "$T/create.log")"
fill "$n/a.conf" stack
mkdir "$T/n50moved"
for f in "$n"/g*.img; do
  mv "$f" "$T/n50moved/$(basename "$f" .img | rev).img"
done
scan_split "$T/s7" "$T/n50moved"
c=$T/s7/stack.conf
[ "$(grep -c '^\[array' "$T/s7/scan.out")" = 3 ] &&
  [ "$(members_of "$c" | head -2 | tr '\n' ' ')" = "array:g0 array:g1 " ] &&
  grep -qx '\[array g0\]' "$c" && grep -qx '\[members g1\]' "$c" ||
  die "nested: $(cat "$T/s7/scan.out")"
reads_back "$c" stack
echo "ok: a RAID50 is found whole: one config with its groups"

# ---- two arrays of one name, one member by its NBD URI ---------------
make_array "$T/twins/a" twin 1 - - 2
make_array "$T/twins/b" twin 1 - - 2
start_member twin-a0 "$T/twins/a/d0.img"
scan_split "$T/s8" "$member_uri" "$T/twins/a/d1.img" "$T/twins/b"
ua=$("$NBDRAID" examine --json "$T/twins/a/d1.img" | /usr/bin/python3 -c \
       'import json, sys; print(json.load(sys.stdin)[0]["uuid"])')
ub=$("$NBDRAID" examine --json "$T/twins/b/d1.img" | /usr/bin/python3 -c \
       'import json, sys; print(json.load(sys.stdin)[0]["uuid"])')
[ "$(wc -l < "$T/s8/scan.err")" = 1 ] &&
  grep -q "two arrays are named 'twin'" "$T/s8/scan.err" &&
  grep -q "$ua" "$T/s8/scan.err" && grep -q "$ub" "$T/s8/scan.err" ||
  die "same names: $(cat "$T/s8/scan.err")"
[ "$(grep -c '^name = twin$' "$T/s8/scan.out")" = 2 ] &&
  grep -qxF "member = $member_uri" "$T/s8/scan.out" ||
  die "twins: $(cat "$T/s8/scan.out")"
echo "ok: two arrays of one name both printed, with a warning; a URI kept"
