#!/usr/bin/env bash
# Nested arrays: RAID0 over two RAID5 groups (RAID50) with two shared
# spares, and RAID0 over two RAID6 groups (RAID60).  Data goes in and
# comes back through NBD; every group's members hold what md's layouts
# say (the model builds each group's image, then the outer array's from
# those); a member lost in each group pulls a shared spare into that
# group, which rebuilds; the spares stay there across a restart; one
# loss too many in a group makes reads of its stripes fail with EIO
# while the other group's still read back; bad nesting is refused.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh
requires nbdinfo

d=$T/n
mkdir -p "$d"

# nested_config FILE LEVEL: RAID0 (chunk 64K) over groups g0 and g1 of
# LEVEL (chunk 32K) with N members each, then any extra top-level lines.
nested_config () {
  local file=$1 level=$2 n=$3 g i
  shift 3
  {
    printf '[array]\nname = top\nsocket = %s\nlevel = 0\nchunk = 64K\n' \
      "$d/top.sock"
    printf '[members]\nmember = array:g0\nmember = array:g1\n'
    for i in "$@"; do echo "$i"; done
    for g in 0 1; do
      printf '[array g%s]\nlevel = %s\nchunk = 32K\n[members g%s]\n' \
        "$g" "$level" "$g"
      for ((i = 0; i < n; i++)); do
        truncate -s 20M "$d/g$g-d$i.img"
        echo "member = g$g-d$i.img"
      done
    done
  } > "$file"
}

# group_members G: group G's member files in role order, from status
group_members () {
  status_json | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
g = [a for a in j["arrays"] if a["name"] == sys.argv[1]][0]
print("\n".join(x["path"] for x in g["devices"] if x["role"] >= 0))' "$1"
}

# check_nested DATA: each group's members match the model, and the
# outer array built from the groups' images holds DATA.
check_nested () {
  local g
  for g in g0 g1; do
    members=$(cat "$T/$g.members")
    # shellcheck disable=SC2086
    $MODEL image -o "$T/$g.img" $members || die "model: $g image failed"
    # shellcheck disable=SC2086
    $MODEL check $members > "$T/check.out" ||
      die "$g: redundancy wrong: $(cat "$T/check.out")"
  done
  $MODEL image -o "$T/top.img" "$T/g0.img" "$T/g1.img" ||
    die "model: outer image failed"
  cmp "$1" "$T/top.img" || die "the groups do not hold the data"
}

roundtrip_nested () {
  local level=$1 n=$2 size
  rm -f "$d"/*.img
  nested_config "$d/top.conf" "$level" "$n"
  conf=$d/top.conf
  "$NBDRAID" create "$conf" 2>> "$T/create.log" ||
    { cat "$T/create.log" >&2; die "create RAID${level}0 failed"; }
  start_server "$conf"
  wait_status 60 "all(a['synced'] for a in j['arrays'])"
  size=$(export_size)
  # Extents come from the groups' extents: holes but for one piece.
  nbdsh -u "$uri" -c "h.pwrite(b'\\xa5' * 1048576, $((size / 3 + 4321)))" ||
    die "RAID${level}0: write failed"
  check_map "RAID${level}0" "$size" $((size / 3 + 4321))
  random_file "$T/data" "$size"
  nbdcopy --connections=4 --flush "$T/data" "$uri"
  nbdcopy "$uri" "$T/out"
  cmp "$T/data" "$T/out" || die "RAID${level}0: read back differs"
  group_members g0 > "$T/g0.members"
  group_members g1 > "$T/g1.members"
  stop_server
  check_nested "$T/data"
  echo "ok: RAID${level}0 ($size bytes) round trip, groups match the model"
}

# expect_eio: reading the first outer chunk (on g0) fails with EIO, the
# second (on g1) reads back from $T/data.
expect_eio () {
  nbdsh -u "$uri" -c '
try:
    h.pread(4096, 0)
    raise SystemExit("read of a failed group worked")
except nbd.Error as e:
    assert e.errno == "EIO", e
' || die "read of the failed group did not fail with EIO"
  cmp <(nbdsh -u "$uri" -c 'import sys; sys.stdout.buffer.write(h.pread(65536, 65536))') \
    <(dd if="$T/data" bs=64K skip=1 count=1 status=none) ||
    die "g1's stripe does not read back"
  status_is "j['failed'] and j['devices'][0]['state'] == 'faulty'" ||
    die "status does not show the failed group: $(status_json)"
}

roundtrip_nested 6 4

# Two members lost in every RAID6 group: everything still reads back;
# a third in g0 fails its stripes.
start_server "$conf"
for m in g0-d0 g0-d3 g1-d1 g1-d2; do
  "$NBDRAID" fail "$conf" "$d/$m.img" > /dev/null
done
status_is "all(a['working'] == 2 for a in j['arrays']) and not j['failed']" ||
  die "RAID60 with two lost per group: $(status_json)"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "RAID60: read back with two lost per group differs"
"$NBDRAID" fail --force "$conf" "$d/g0-d1.img" > /dev/null
expect_eio
stop_server
echo "ok: RAID60 reads back with two members lost per group, EIO after a third"

# RAID50 with two shared spares.
rm -f "$d"/*.img
truncate -s 20M "$d/s0.img" "$d/s1.img"
nested_config "$d/top.conf" 5 3 "spare = s0.img" "spare = s1.img"
conf=$d/top.conf
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  { cat "$T/create.log" >&2; die "create RAID50 failed"; }
grep -q "created array 'top': RAID0, 2 members, 2 shared spares" \
  "$T/create.log" || die "create did not report the shared spares"
start_server "$conf"
status_is "len(j['arrays']) == 2 and len(j['shared_spares']) == 2" ||
  die "status does not show the groups and shared spares: $(status_json)"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --connections=4 --flush "$T/data" "$uri"

# A member of each group fails: each takes a shared spare and rebuilds.
"$NBDRAID" monitor "$conf" > "$T/monitor.out" 2>&1 &
monitor_pid=$!
cleanup_fn "kill $monitor_pid 2>/dev/null"
wait_for 10 grep -q "^monitoring array top" "$T/monitor.out" ||
  die "the monitor did not subscribe: $(cat "$T/monitor.out")"
"$NBDRAID" fail "$conf" "$d/g0-d1.img" > /dev/null
"$NBDRAID" fail "$conf" "$d/g1-d2.img" > /dev/null
wait_status 60 "'shared_spares' not in j and all(a['working'] == 3 and \
a['job']['kind'] == 'idle' for a in j['arrays'])"
for g in "g0 $d/s0.img" "g1 $d/s1.img"; do
  # Each event line starts with the date and time it was seen.
  grep -Eqx "[0-9-]+ [0-9:]+ MoveSpare $g top" "$T/monitor.out" ||
    die "no MoveSpare $g event: $(cat "$T/monitor.out")"
done
kill $monitor_pid
status_is "[d['path'] for a in j['arrays'] for d in a['devices'] \
if d['role'] >= 0] == ['$d/g0-d0.img', '$d/s0.img', '$d/g0-d2.img', \
'$d/g1-d0.img', '$d/g1-d1.img', '$d/s1.img']" ||
  die "the spares are not where they should be: $(status_json)"
grep -q "array g0: spare $d/s0.img takes the place of member 1" \
  "$T/nbdkit.log" || die "no log of g0 taking the spare"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "RAID50: read back after rebuilds differs"
stop_server

# Across a restart the spares belong to their groups.
start_server "$conf"
status_is "all(a['working'] == 3 for a in j['arrays']) and \
'shared_spares' not in j" || die "after restart: $(status_json)"
group_members g0 > "$T/g0.members"
group_members g1 > "$T/g1.members"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "RAID50: read back after restart differs"
stop_server
check_nested "$T/data"
echo "ok: RAID50 lost a member per group, shared spares rebuilt them"

# Bad admin input names the culprit.
start_server "$conf"
out=$("$NBDRAID" fail "$conf" --array nosuch 1 2>&1) && die "fail --array nosuch worked"
[ "$out" = "nbdraid: no array named nosuch here" ] || die "unexpected: $out"
out=$("$NBDRAID" add "$conf" "$d/g0-d0.img" 2>&1) && die "adding a member as a spare worked"
case $out in *"already in array"*) ;; *) die "unexpected: $out" ;; esac

# One loss too many in g0: its stripes fail with EIO, g1's still read.
"$NBDRAID" fail "$conf" "$d/g0-d0.img" > /dev/null
"$NBDRAID" fail --force "$conf" "$d/s0.img" > /dev/null
expect_eio
stop_server
echo "ok: a failed group fails its stripes with EIO, the rest reads"

# Bad nesting is refused with the config line.
bad () {
  local want=$1 out
  out=$("$NBDRAID" create "$d/bad.conf" 2>&1) && die "bad config accepted"
  case $out in *"$want"*) ;; *) die "expected '$want', got: $out" ;; esac
}
printf '[array]\nlevel = 0\nchunk = 64K\n[members]\nmember = array:a\nmember = d.img\n[array a]\nlevel = 1\n[members a]\nmember = array:a\nmember = e.img\n' > "$d/bad.conf"
bad "bad.conf:10: array:a contains itself"
printf '[array]\nlevel = 0\nchunk = 64K\n[members]\nmember = array:a\nmember = d.img\n[array a]\nlevel = 1\n[members a]\nmember = array:b\nmember = e.img\n[array b]\nlevel = 1\n[members b]\nmember = array:a\nmember = f.img\n' > "$d/bad.conf"
bad "bad.conf:10: array:b makes a cycle: it contains array a"
printf '[array]\nlevel = 0\nchunk = 64K\n[members]\nmember = array:a\nmember = array:a\n[array a]\nlevel = 1\n[members a]\nmember = d.img\nmember = e.img\n' > "$d/bad.conf"
bad "bad.conf:6: array:a is a member twice"
printf '[array]\nlevel = 0\nchunk = 64K\n[members]\nmember = array:b\nmember = d.img\n' > "$d/bad.conf"
bad "bad.conf:5: array:b: no [array b] in this config"
printf '[array]\nlevel = 1\n[members]\nmember = d.img\nmember = e.img\n[array c]\nlevel = 1\n[members c]\nmember = f.img\nmember = g.img\n' > "$d/bad.conf"
bad "bad.conf:6: array c is defined but no array has it as a member"
printf '[array]\nlevel = 0\nchunk = 64K\n[members]\nmember = array:a\nmember = d.img\n[array a]\nlevel = 1\n[members a]\nmember = d.img\nmember = e.img\n' > "$d/bad.conf"
bad "bad.conf:10: $d/d.img is listed twice"
printf '[array]\nlevel = 0\nchunk = 6K\n[members]\nmember = array:a\nmember = d.img\n[array a]\nlevel = 1\n[members a]\nmember = e.img\nmember = f.img\n' > "$d/bad.conf"
bad "bad.conf:3: chunk"
echo "ok: bad nesting refused"

# An outer array refused after its inner arrays were created (their
# 1 MiB of data is too small for it) leaves every disk as it was.
for f in p q r s; do head -c 2M /dev/urandom > "$d/$f.img"; done
before=$(cat "$d"/[pqrs].img | sha256sum)
printf '[array]\nlevel = 0\nchunk = 64K\n[members]\nmember = array:x\nmember = array:y\n[array x]\nlevel = 1\n[members x]\nmember = p.img\nmember = q.img\n[array y]\nlevel = 1\n[members y]\nmember = r.img\nmember = s.img\n' > "$d/bad.conf"
bad "array:x is too small"
[ "$(cat "$d"/[pqrs].img | sha256sum)" = "$before" ] ||
  die "a refused nested create left its inner arrays' superblocks behind"
echo "ok: a refused nested create writes nothing"

# Controller loss through the stack: RAID60 with two disks of each group
# per controller survives losing one; with three of g0's on c0 it does
# not, and examine names the group.
ex=$abs_top_srcdir/conf/raid60-4x6-3controllers.conf
grep -q "survives the loss of any one controller" <<< "$("$NBDRAID" examine "$ex")" ||
  die "RAID60 example: $("$NBDRAID" examine "$ex")"
sed 's/DISK-01 controller=c1/DISK-01 controller=c0/; s/DISK-02 controller=c2/DISK-02 controller=c0/' \
  "$ex" > "$d/c0heavy.conf"
"$NBDRAID" examine "$d/c0heavy.conf" |
  grep -q "losing controller c0 (member 0 = array:g0) would fail the array" ||
  die "c0-heavy RAID60: $("$NBDRAID" examine "$d/c0heavy.conf")"
echo "ok: controller loss checked through nested arrays"
