#!/usr/bin/env bash
# One nbdkit serves every array of a directory (dir=DIR), each as the
# export its array name names: nbdinfo --list shows them with what
# they are; concurrent clients of three arrays each read back what
# they wrote; failing a member of one leaves the others untouched; a
# broken config, a second array of the same name and one that takes
# another's member are each reported in one line and left out, while
# the others serve.  Export "" is refused when there are several.
# nbdraid reload serves a config added later.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh
requires nbdcopy

etc=$T/etc
mkdir -p "$etc"
# array NAME LEVEL LAYOUT CHUNK N: members in $T/NAME, config in $etc
array () {
  named_array "$etc/$1.conf" "$1" "$T/$1" "$2" "$3" "$4" "$5" 16M
}
array mirror 1 - - 2
array parity 5 left-symmetric 64K 4
array double 6 left-symmetric 64K 5
printf '[array]\nname = broken\nlevel = 7\n[members]\nmember = %s\n' \
  "$T/nothing.img" > "$etc/broken.conf"
# Same name as another, and a member of another, in files of their own.
sed "s|socket = .*|socket = $T/etc/twin.sock|" "$etc/mirror.conf" > "$etc/twin.conf"
sed "s|socket = .*|socket = $T/etc/thief.sock|; s|name = parity|name = thief|" \
  "$etc/parity.conf" > "$etc/thief.conf"

start_server "dir=$etc"
grep -q "left out: .*broken.conf.*level" "$T/nbdkit.log" ||
  die "the broken config was not reported: $(cat "$T/nbdkit.log")"
grep -q "left out: $etc/twin.conf: array mirror has the name or control socket of array mirror in $etc/mirror.conf" \
  "$T/nbdkit.log" || die "the twin was not reported: $(cat "$T/nbdkit.log")"
grep -q "left out: $etc/thief.conf: array thief: $T/parity/d0.img is a device of array parity ($etc/parity.conf)" "$T/nbdkit.log" ||
  die "the thief was not reported: $(cat "$T/nbdkit.log")"

list=$(nbdinfo --list --json "$uri") || die "nbdinfo --list failed"
python3 - "$list" <<'PY' || die "export list: $list"
import json, sys
l = json.loads(sys.argv[1])
got = {e["export-name"]: e.get("description", "") for e in l["exports"]}
want = {"double": "RAID6 left-symmetric, 5 members, 64K chunk, active",
        "mirror": "RAID1, 2 members, active",
        "parity": "RAID5 left-symmetric, 4 members, 64K chunk, active"}
if got != want:
    sys.exit(f"exports {got}, wanted {want}")
PY

# Three clients at once, one per export.
for a in mirror parity double; do
  u="nbd+unix:///$a?socket=$sock"
  random_file "$T/$a.data" "$(nbdinfo --size "$u")"
  nbdcopy --connections=2 "$T/$a.data" "$u" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || die "a writer failed"; done
for a in mirror parity double; do
  nbdcopy "nbd+unix:///$a?socket=$sock" "$T/$a.back"
  cmp "$T/$a.data" "$T/$a.back" || die "$a did not read back"
done

# Each array has its own control socket; a failure stays in its array.
"$NBDRAID" fail "$etc/parity.conf" 2 > /dev/null || die "fail in parity"
conf=$etc/parity.conf
status_is "j['state'] == 'degraded'" || die "parity: $(status_json)"
for a in mirror double; do
  conf=$etc/$a.conf
  status_is "j['state'] == 'active' and j['name'] == '$a'" ||
    die "$a was touched: $(status_json)"
done
for a in mirror parity double; do
  nbdcopy "nbd+unix:///$a?socket=$sock" "$T/$a.back"
  cmp "$T/$a.data" "$T/$a.back" || die "$a changed"
done

if out=$(nbdsh -u "nbd+unix:///?socket=$sock" -c 'pass' 2>&1); then
  die "the default export opened with several arrays"
fi
grep -q "several arrays (double, mirror, parity)" "$T/nbdkit.log" ||
  die "export \"\": $(tail -3 "$T/nbdkit.log")"
if nbdsh -u "nbd+unix:///nosuch?socket=$sock" -c 'pass' 2>/dev/null; then
  die "export nosuch opened"
fi
grep -q "no array named 'nosuch' here (exports: double, mirror, parity)" \
  "$T/nbdkit.log" || die "export nosuch: $(tail -3 "$T/nbdkit.log")"

# nbdraid reload serves a config added since, tells again what is
# still left out, and touches nothing that serves.
rm "$etc/broken.conf" "$etc/twin.conf"
array extra 10 n2 64K 4
if out=$("$NBDRAID" reload "$etc/mirror.conf" 2>&1); then
  die "reload with the thief still there succeeded: $out"
fi
grep -q "serving array extra from $etc/extra.conf" <<< "$out" ||
  die "reload: $out"
grep -q "left out: $etc/thief.conf: array thief: $T/parity/d0.img is a device of array parity" <<< "$out" ||
  die "reload: $out"
rm "$etc/thief.conf"
out=$("$NBDRAID" reload "$etc/double.conf") || die "second reload: $out"
[ "$out" = "nothing new to serve" ] || die "second reload: $out"
[ "$(nbdinfo --list --json "$uri" | python3 -c 'import json,sys; print(sorted(e["export-name"] for e in json.load(sys.stdin)["exports"]))')" = \
  "['double', 'extra', 'mirror', 'parity']" ] || die "not four exports"
u="nbd+unix:///extra?socket=$sock"
random_file "$T/extra.data" "$(nbdinfo --size "$u")"
nbdcopy "$T/extra.data" "$u" && nbdcopy "$u" "$T/extra.back" &&
  cmp "$T/extra.data" "$T/extra.back" || die "extra did not read back"
conf=$etc/extra.conf
status_is "j['state'] == 'active'" || die "extra: $(status_json)"
for a in mirror parity double; do
  nbdcopy "nbd+unix:///$a?socket=$sock" "$T/$a.back"
  cmp "$T/$a.data" "$T/$a.back" || die "$a changed by the reload"
done

# nbdraid stop ends the server and every array in it, all clean.
out=$("$NBDRAID" stop "$etc/mirror.conf") || die "stop: $out"
timeout 20 tail --pid="$server_pid" -f /dev/null || die "nbdkit did not exit"
server_pid=
for a in mirror double extra; do
  grep -q "State : clean" <<< "$("$NBDRAID" examine "$T/$a/d0.img")" ||
    die "$a not stopped clean"
done

# A directory nbdkit cannot read: one line naming it.
if nbdkit -U "$(new_socket)" "$PLUGIN" dir="$T/nowhere" 2> "$T/err"; then
  die "a missing directory started"
fi
grep -q "dir=$T/nowhere: No such file or directory" "$T/err" ||
  die "missing dir: $(cat "$T/err")"
echo "ok: three arrays in one server, by export name, the bad left out"
