#!/usr/bin/env bash
# Controllers as failure domains: nbdraid create says whether the array
# survives the loss of any one controller, --arrange reorders members
# (and the config's member lines) so it does when it can,
# --strict-controllers refuses when it does not, a create refused after
# --arrange leaves the config as it was, and a controller not declared
# in [array] controllers is refused by file:line.
. "$(dirname "$0")/lib.sh"
requires nbdkit

d=$T/c
make_members "$d" 6 4M
# conf LEVEL LAYOUT CTRL...: members d0.. on the given controllers
conf () {
  local level=$1 layout=$2 i=0 c
  shift 2
  printf '[array]\nsocket = %s\nlevel = %s\nlayout = %s\nchunk = 64K\n[members]\n' \
    "$d/a.sock" "$level" "$layout" > "$d/a.conf"
  for c in "$@"; do echo "member = d$i.img controller=$c" >> "$d/a.conf"; i=$((i + 1)); done
}
create () { "$NBDRAID" create --force --assume-clean "$@" "$d/a.conf" 2>&1; }

# RAID10 n2 with each mirror pair on one controller: warned, refused
# when strict, fixed by --arrange.
conf 10 n2 c0 c0 c1 c1
out=$(create)
grep -q "warning: losing controller c0 (members 0, 1) would fail the array; try --arrange" <<< "$out" ||
  die "no warning: $out"
if out=$(create --strict-controllers); then die "strict create succeeded"; fi
grep -q "a.conf: losing controller c0 (members 0, 1) would fail the array; try --arrange" <<< "$out" ||
  die "strict refusal: $out"
out=$(create --arrange)
grep -q "rearranged the members" <<< "$out" || die "not rearranged: $out"
grep -q "survives the loss of any one controller: c0 (2), c1 (2)" <<< "$out" ||
  die "arranged array does not survive: $out"
order=$(sed -n 's/^member = \(d[0-9]\).img controller=\(c[0-9]\)$/\2/p' "$d/a.conf" | tr -d '\n')
[ "$order" = c0c1c0c1 ] || die "arranged order is $order"
grep -q "Controller Loss : survives" <<< "$("$NBDRAID" examine "$d/a.conf")" ||
  die "examine disagrees"
start_server "$d/a.conf"
stop_server
echo "ok: RAID10 mirror pairs arranged across controllers"

# A create refused after --arrange rewrote an inner array's member lines
# (the outer RAID0 finds its nested arrays too small) puts the config
# back as well as the disks.
for f in p q r s t u; do head -c 2M /dev/urandom > "$d/$f.img"; done
printf '[array]\nlevel = 0\nchunk = 64K\n[members]\nmember = array:x\nmember = array:y\n[array x]\nlevel = 10\nlayout = n2\nchunk = 64K\n[members x]\nmember = p.img controller=c0\nmember = q.img controller=c0\nmember = r.img controller=c1\nmember = s.img controller=c1\n[array y]\nlevel = 1\n[members y]\nmember = t.img\nmember = u.img\n' > "$d/n.conf"
cp "$d/n.conf" "$d/n.conf.orig"
before=$(cat "$d"/[p-u].img | sha256sum)
if out=$("$NBDRAID" create --arrange "$d/n.conf" 2>&1); then
  die "create of too small nested arrays succeeded"
fi
grep -q "rearranged the members" <<< "$out" || die "not rearranged first: $out"
grep -q "array:y is too small" <<< "$out" || die "refusal: $out"
cmp -s "$d/n.conf" "$d/n.conf.orig" ||
  die "a refused create left the config rearranged: $(diff "$d/n.conf.orig" "$d/n.conf")"
[ "$(cat "$d"/[p-u].img | sha256sum)" = "$before" ] ||
  die "a refused create left superblocks behind"
echo "ok: a create refused after --arrange puts the config back"

# RAID6 with three members on one controller: no order helps.
conf 6 left-symmetric c0 c0 c0 c1 c1 c2
if out=$(create --arrange --strict-controllers); then die "RAID6 3-on-one created"; fi
grep -q "losing controller c0 (members 0, 1, 2) would fail the array, and no order of the members avoids it" <<< "$out" ||
  die "RAID6 refusal: $out"
echo "ok: RAID6 with three members on one controller is refused when strict"

# A controller that was not declared.
printf '[array]\nlevel = 1\ncontrollers = c0 c1\n[members]\nmember = d0.img controller=c0\nmember = d1.img controller=c2\n' > "$d/a.conf"
if out=$(create); then die "undeclared controller accepted"; fi
[ "$out" = "nbdraid: $d/a.conf:6: controller 'c2' is not one of those declared in [array] controllers (c0 c1)" ] ||
  die "undeclared controller: $out"
echo "ok: undeclared controller refused"

# A grow checks the new shape: a spare on c0 taking a RAID5's fifth
# role puts two members on c0, and the answer says so.
g=$T/g
make_members "$g" 5 34M
printf '[array]\nsocket = %s\nlevel = 5\nchunk = 64K\ncontrollers = c0 c1 c2 c3\n[members]\n' "$g/a.sock" > "$g/a.conf"
for i in 0 1 2 3; do echo "member = d$i.img controller=c$i" >> "$g/a.conf"; done
"$NBDRAID" create --assume-clean "$g/a.conf" > /dev/null 2>&1 || die "create failed"
start_server "$g/a.conf"
"$NBDRAID" add "$g/a.conf" "$g/d4.img" > /dev/null || die "add refused"
sed -i 's|^spare = \(.*d4.img\)$|spare = \1 controller=c0|' "$g/a.conf"
out=$("$NBDRAID" grow "$g/a.conf" --raid-devices 5) || die "grow refused: $out"
grep -q "^warning: losing controller c0 (members 0, 4) would fail the array" <<< "$out" ||
  die "the grow does not warn of controller c0: $out"
grep -q '^member = .*d4.img controller=c0$' "$g/a.conf" || die "the new member line lost its controller: $(cat "$g/a.conf")"
stop_server
echo "ok: a grow that puts two members on one controller warns: $(tail -1 <<< "$out")"
