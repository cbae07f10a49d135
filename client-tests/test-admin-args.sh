#!/usr/bin/env bash
# The nbdraid verbs check their arguments before they reach for the
# server: too few or too many words, or an option the verb does not
# take, give that verb's usage and exit 2 (a config whose socket does
# not exist proves nothing was sent: that would be exit 1); VERB --help
# prints the usage and exits 0.  A MEMBER given by another name of the
# same file (a symlink, a path relative to elsewhere) finds it; remove
# failed (mdadm's keyword) removes every failed device; fail detached
# and remove detached act on devices whose file is gone.  add
# --array g0 PATH adds the spare to the nested array g0.  Root reaches
# an array served by another user, whose socket sits in a directory
# that user alone owns.
. "$(dirname "$0")/lib.sh"
requires nbdkit

# expect_usage VERB ARGS...: exit 2, and the verb's usage line
expect_usage () {
  local verb=$1 rc=0 out
  out=$("$NBDRAID" "$@" 2>&1) || rc=$?
  [ "$rc" = 2 ] || die "nbdraid $*: exit $rc, not 2: $out"
  grep -q "^usage: nbdraid $verb " <<< "$out" || die "nbdraid $*: $out"
}

printf '[array]\nname = nowhere\nsocket = %s\nlevel = 1\n[members]\nmember = a\nmember = b\n' \
  "$T/no-such.sock" > "$T/nowhere.conf"
c=$T/nowhere.conf
expect_usage fail "$c"
expect_usage fail "$c" 1 2
expect_usage remove "$c"
expect_usage add "$c"
expect_usage add "$c" a b
expect_usage re-add "$c"
expect_usage replace "$c"
expect_usage replace "$c" 1 --with
expect_usage check "$c" extra
expect_usage check "$c" --budget
expect_usage status "$c" --force
expect_usage idle "$c" 1
expect_usage speed-limit "$c" 10
expect_usage speed-limit "$c" 1 2 3
expect_usage wait "$c" now
expect_usage readonly "$c" now
expect_usage readwrite "$c" 1
expect_usage reload "$c" now
expect_usage status
expect_usage scan
expect_usage scan --bogus "$T"
for verb in status fail remove add re-add replace check repair idle \
            speed-limit readonly readwrite reload wait monitor create \
            examine scan; do
  out=$("$NBDRAID" $verb --help) || die "nbdraid $verb --help failed"
  grep -q "^usage: nbdraid $verb" <<< "$out" || die "$verb --help: $out"
done
echo "ok: wrong arguments get the verb's usage, exit 2, nothing sent"

# Another name for a member: a symlink, a relative path from elsewhere.
new_array r5 5 left-symmetric 64K 4 8M --assume-clean
start_server "$conf"
ln -s "$T/r5/d2.img" "$T/link-to-d2"
out=$("$NBDRAID" fail "$conf" "$T/link-to-d2") || die "fail by a symlink: $out"
status_is "j['devices'][2]['state'] == 'faulty'" ||
  die "the symlink did not name member 2: $(status_json)"
mkdir "$T/elsewhere"
out=$(cd "$T/elsewhere" && "$NBDRAID" remove "$conf" ../r5/./d2.img) ||
  die "remove by a relative path: $out"
status_is "j['devices'][2]['state'] == 'missing' and j['devices'][2]['why'] == 'removed by the admin'" ||
  die "the relative path did not name d2: $(status_json)"
stop_server
echo "ok: a member found by a symlink and by a relative path"

# remove failed, mdadm's keyword: every faulty device goes.
new_array r6 6 left-symmetric 64K 6 8M --assume-clean
start_server "$conf"
"$NBDRAID" fail "$conf" 1 > /dev/null && "$NBDRAID" fail "$conf" 4 > /dev/null ||
  die "failing two members was refused"
out=$(cd "$T" && "$NBDRAID" remove "$conf" failed) || die "remove failed: $out"
grep -q "removed $T/r6/d1.img" <<< "$out" && grep -q "removed $T/r6/d4.img" <<< "$out" ||
  die "remove failed said: $out"
status_is "not any(d['state'] == 'faulty' for d in j['devices'])" ||
  die "faulty devices left: $(status_json)"
[ "$(grep -c '^member = missing' "$conf")" = 2 ] || die "config: $(cat "$conf")"
out=$("$NBDRAID" remove "$conf" failed) || die "a second remove failed: $out"
grep -q "no failed device to remove" <<< "$out" || die "second remove failed: $out"
stop_server
echo "ok: remove failed removed both failed members"

# detached, mdadm's other keyword: a device whose path names nothing
# now (here, a member file removed while served; a spare too).
new_array r5d 5 left-symmetric 64K 4 8M --assume-clean
truncate -s 8M "$T/r5d/spare.img"
start_server "$conf"
random_file "$T/r5d.data" "$(export_size)"
nbdcopy "$T/r5d.data" "$uri"
"$NBDRAID" add "$conf" "$T/r5d/spare.img" > /dev/null || die "add spare"
"$NBDRAID" speed-limit "$conf" 0.1 0.1 > /dev/null   # hold the rebuild
out=$("$NBDRAID" fail "$conf" detached) || die "fail detached: $out"
[ "$out" = "no detached device to fail" ] || die "fail detached said: $out"
rm "$T/r5d/d3.img"
status_is "j['devices'][3]['detached'] and not j['devices'][0]['detached']" ||
  die "d3 not shown detached: $(status_json)"
out=$("$NBDRAID" fail "$conf" detached) || die "fail detached: $out"
[ "$out" = "failed $T/r5d/d3.img" ] || die "fail detached said: $out"
status_is "[d['state'] for d in j['devices'] if d['path'] == '$T/r5d/d3.img'] == ['faulty']" ||
  die "d3 not failed: $(status_json)"
"$NBDRAID" speed-limit "$conf" 0 0 > /dev/null
"$NBDRAID" wait "$conf"
out=$("$NBDRAID" remove "$conf" detached) || die "remove detached: $out"
[ "$out" = "removed $T/r5d/d3.img" ] || die "remove detached said: $out"
grep -q "^member = $T/r5d/d3.img" "$conf" && die "d3 still in the config: $(cat "$conf")"
nbdcopy "$uri" "$T/r5d.back" && cmp "$T/r5d.data" "$T/r5d.back" ||
  die "the array lost data"
stop_server
echo "ok: fail detached and remove detached"

# add --array g0 PATH: the spare goes to g0, not to a file named g0.
d=$T/n
mkdir -p "$d"
{
  printf '[array]\nname = top\nsocket = %s\nlevel = 0\nchunk = 64K\n' "$d/top.sock"
  printf '[members]\nmember = array:g0\nmember = array:g1\n'
  for g in 0 1; do
    printf '[array g%s]\nlevel = 5\nchunk = 32K\n[members g%s]\n' "$g" "$g"
    for i in 0 1 2; do
      truncate -s 20M "$d/g$g-d$i.img"
      echo "member = g$g-d$i.img"
    done
  done
} > "$d/a.conf"
conf=$d/a.conf
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "nested create: $(tail -1 "$T/create.log")"
start_server "$conf"
truncate -s 20M "$d/s9.img"
out=$(cd "$d" && "$NBDRAID" add "$conf" --array g0 s9.img) ||
  die "add --array g0: $out"
status_is "any(x['path'] == '$d/s9.img' and x['state'] == 'spare' for a in j['arrays'] if a['name'] == 'g0' for x in a['devices'])" ||
  die "the spare did not go to g0: $(status_json)"
grep -q "spare = $d/s9.img" "$conf" || die "the config did not gain it: $(cat "$conf")"
# Nested arrays are never detached; a nested array is not made
# read-only alone (the top would fail it out).
status_is "not any(x['detached'] for x in j['devices'])" ||
  die "nested arrays shown detached: $(status_json)"
out=$("$NBDRAID" fail "$conf" detached) || die "fail detached: $out"
[ "$out" = "no detached device to fail" ] || die "fail detached on nested: $out"
if out=$("$NBDRAID" readonly "$conf" --array g0 2>&1); then
  die "readonly --array g0 passed: $out"
fi
grep -q "array g0 is nested in array top: make top readonly instead" <<< "$out" ||
  die "readonly --array g0: $out"
status_is "j['state'] == 'active' and not j['readonly']" || die "$(status_json)"
stop_server
echo "ok: add --array g0 PATH gave g0 a spare; nested arrays not detached"

# Root reaches an array another user serves.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null &&
   id nobody > /dev/null 2>&1; then
  chmod 755 "$T"
  mkdir "$T/svc"
  make_members "$T/svc" 2 4M
  printf '[array]\nname = svc\nsocket = %s\nlevel = 1\n[members]\nmember = %s\nmember = %s\n' \
    "$T/svc/run/ctl.sock" "$T/svc/d0.img" "$T/svc/d1.img" > "$T/svc/a.conf"
  "$NBDRAID" create --assume-clean "$T/svc/a.conf" 2>> "$T/create.log" ||
    die "svc create failed"
  mkdir -m 700 "$T/svc/run"
  cp "$PLUGIN" "$T/svc/plugin.so"
  chown -R nobody: "$T/svc"
  setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
    nbdkit -f -U "$T/svc/run/nbd.sock" "$T/svc/plugin.so" "$T/svc/a.conf" \
    2>> "$T/svc.log" &
  svc=$!
  cleanup_fn "kill $svc 2>/dev/null"
  wait_for 20 test -S "$T/svc/run/ctl.sock" ||
    die "the service's server did not start: $(cat "$T/svc.log")"
  out=$("$NBDRAID" status "$T/svc/a.conf") ||
    die "root did not reach nobody's server: $out"
  grep -q "^svc : active raid1 \[2/2\]" <<< "$out" || die "status: $out"
  kill "$svc"
  wait "$svc" 2>/dev/null || :
  echo "ok: root reached an array served by nobody"
else
  echo "skipped: root reaching another user's server (needs root, setpriv, nobody)"
fi
