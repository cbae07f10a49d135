#!/usr/bin/env bash
# nbdraid's admin verbs refuse bad requests with one clear line and a
# non-zero exit, changing nothing: an unknown command, a member that
# does not exist, add of a device too small or already in the array,
# fail beyond the level's tolerance (unless --force), a second job while
# one runs, and a server that is not there.
. "$(dirname "$0")/lib.sh"
requires nbdkit

new_array r5 5 left-symmetric 64K 3 8M --assume-clean
echo "speed-max = 1M" > "$T/speed"
sed -i "/^\[array\]/r $T/speed" "$conf"

# What must not change: membership, states, the kind of job.
signature () {
  status_json | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["state"], j["job"]["kind"],
      [(d["role"], d["state"], d["path"]) for d in j["devices"]])'
}

# expect_refusal DESCRIPTION EXPECTED-TEXT nbdraid-args...
expect_refusal () {
  local what=$1 want=$2 out before
  shift 2
  before=$(signature)
  if out=$("$NBDRAID" "$@" 2>&1); then die "$what: accepted: $out"; fi
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || die "$what: not one line: $out"
  case $out in
    *"$want"*) echo "ok: $what: $out" ;;
    *) die "$what: expected '$want', got: $out" ;;
  esac
  [ "$(signature)" = "$before" ] || die "$what: the array changed"
}

if out=$("$NBDRAID" status "$conf" 2>&1); then die "status with no server: $out"; fi
grep -q "a.sock: No such file or directory (is the array being served?)" <<< "$out" ||
  die "no server: $out"
echo "ok: no server: $out"

start_server "$conf"
truncate -s 1M "$T/small.img"
expect_refusal "unknown command" "unknown command 'frobnicate'" \
  frobnicate --socket "${conf%.conf}.sock"
expect_refusal "no such member" "array test has no member 7" fail "$conf" 7
expect_refusal "no such device" "array test has no member /nope" fail "$conf" /nope
expect_refusal "add too small" "$T/small.img is too small: 1048576 bytes" add "$conf" "$T/small.img"
expect_refusal "add a member" "$T/r5/d1.img is already in array test" add "$conf" "$T/r5/d1.img"
expect_refusal "remove an active member" "member 1 ($T/r5/d1.img) is in use: fail it first" remove "$conf" 1

"$NBDRAID" fail "$conf" 0 > /dev/null || die "failing one member was refused"
expect_refusal "fail beyond tolerance" "failing member 1 ($T/r5/d1.img) would leave array test without some of its data; add --force" fail "$conf" 1
expect_refusal "check when degraded" "array test is degraded: check needs every member" check "$conf"

# A second job while one runs: a spare rebuilds (slowly), check waits.
truncate -s 8M "$T/spare.img"
"$NBDRAID" add "$conf" "$T/spare.img" > /dev/null || die "add refused"
wait_status 20 "j['job']['kind'] == 'recovery'"
expect_refusal "second job" "array test is busy with a recovery" check "$conf"
expect_refusal "idle of a rebuild" "a recovery cannot be stopped" idle "$conf"
stop_server
