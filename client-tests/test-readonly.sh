#!/usr/bin/env bash
# readonly=true: the members are opened read-only, reads work, every
# write is refused, and not one byte of any member changes.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh

new_array ro 5 left-symmetric 64K 4 4M --assume-clean
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
stop_server
before=$(cat "$T"/ro/*.img | sha256sum)

start_server "$conf" readonly=true
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "read-only read differs"
nbdsh -u "$uri" -c '
assert not h.can_trim() and not h.can_zero()
assert h.is_read_only()
try:
    h.pwrite(b"x" * 512, 0)
    raise SystemExit("write succeeded")
except nbd.Error:
    pass
'
stop_server
[ "$(cat "$T"/ro/*.img | sha256sum)" = "$before" ] || die "members changed"
echo "ok: read-only serving changes nothing"

# nbdkit -r (and --readonly): nothing writes either, not even the
# server's own work.  An array left unclean (its server killed after
# writes) needs a resync, and one degraded with a spare needs a
# rebuild: read-only, each is served and reads back, nbdraid wait
# returns (the server's job loop has looked and found nothing it may
# run), the status still says the work is due, and every byte of every
# member (superblocks, bitmap, data) is as it was.  As the control, a
# read-write server given copies of the same members does the work.

# members_sums DIR: a sha256 line per member file in DIR
members_sums () { (cd "$1" && sha256sum ./*.img); }

# ro_and_control NAME OPTION RO-EXPR RW-EXPR [plugin params]: serve
# $T/NAME with nbdkit OPTION (-r or --readonly), where RO-EXPR must hold
# for the status once nbdraid wait returns; then a copy, $T/NAME.ctl,
# read-write, where RW-EXPR must.
ro_and_control () {
  local name=$1 option=$2 ro_expect=$3 rw_expect=$4 dir=$T/$1 ctl=$T/$1.ctl
  shift 4
  mkdir "$ctl"
  cp --sparse=always "$dir"/*.img "$ctl"/
  sed "s|$dir/|$ctl/|g" "$dir/a.conf" > "$ctl/a.conf"
  members_sums "$dir" > "$T/$name.before"

  conf=$dir/a.conf
  nbdkit_opts=("$option")
  start_server "$conf" "$@"
  nbdcopy "$uri" "$T/out" ||
    die "$name: nbdkit $option: read failed: $(tail -3 "$T/nbdkit.log")"
  cmp "$T/data" "$T/out" || die "$name: nbdkit $option: read differs"
  nbdsh -u "$uri" -c 'assert h.is_read_only()'
  timeout 30 "$NBDRAID" wait "$conf" ||
    die "$name: nbdraid wait failed on nbdkit $option"
  status_is "j['job']['kind'] == 'idle'" ||
    die "$name: nbdkit $option started a job: $(status_json)"
  status_is "$ro_expect" ||
    die "$name: nbdkit $option: the work is no longer due: $(status_json)"
  # A check would never run: it is refused, not left at 0%.
  if out=$("$NBDRAID" check "$conf" 2>&1); then
    die "$name: nbdkit $option accepted a check: $out"
  fi
  grep -q "array test is read-only: no check" <<< "$out" ||
    die "$name: nbdkit $option: check refused with: $out"
  stop_server
  members_sums "$dir" | diff "$T/$name.before" - ||
    die "$name: nbdkit $option changed the members above"

  conf=$ctl/a.conf
  nbdkit_opts=()
  start_server "$conf" "$@"
  timeout 60 "$NBDRAID" wait "$conf" || die "$name: nbdraid wait read-write"
  status_is "$rw_expect" ||
    die "$name: read-write, the work was not done: $(status_json)"
  nbdcopy "$uri" "$T/out" || die "$name: read-write: read failed"
  cmp "$T/data" "$T/out" || die "$name: read-write: read differs"
  stop_server
  if members_sums "$ctl" | cmp -s "$T/$name.before" -; then
    die "$name: the read-write control changed nothing either"
  fi
}

# Unclean: killed after writes, with stripe 0's parity (role 3's first
# chunk in left-symmetric RAID5) made wrong, which a resync rewrites.
new_array ro2 5 left-symmetric 64K 4 4M --assume-clean
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy --flush "$T/data" "$uri"
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || :
server_pid=
/usr/bin/python3 - "$T/ro2/d3.img" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(4096 + 128)
    off = struct.unpack("<Q", f.read(8))[0] * 512   # data_offset
    f.seek(off)
    chunk = f.read(4096)
    f.seek(off)
    f.write(bytes(b ^ 0xff for b in chunk))
PY
# shellcheck disable=SC2086
$MODEL check $members > "$T/check.out" &&
  die "ro2: the parity is not wrong: $(cat "$T/check.out")"
ro_and_control ro2 -r \
  "j['state'] == 'active, read-only, resync due' and j['readonly'] and not j['synced'] and not j['clean']" \
  "j['synced'] and j['state'] == 'active'"
# shellcheck disable=SC2086
$MODEL check $members > "$T/check.out" &&
  die "ro2: nbdkit -r resynced the wrong parity: $(cat "$T/check.out")"
# shellcheck disable=SC2046
$MODEL check $(member_paths "$T/ro2.ctl" 4) > "$T/check.out" ||
  die "ro2: the read-write resync left: $(cat "$T/check.out")"
echo "ok: nbdkit -r leaves an unclean array unsynced; read-write resyncs it"

# Degraded, with a spare that would be rebuilt into role 2.
new_array ro3 5 left-symmetric 64K 4 4M --assume-clean
truncate -s 4M "$T/ro3/s0.img"
echo "spare = $T/ro3/s0.img" >> "$conf"
"$NBDRAID" create --force --assume-clean "$conf" 2>> "$T/create.log"
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy --flush "$T/data" "$uri"
stop_server
rm "$T/ro3/d2.img"
ro_and_control ro3 --readonly \
  "j['working'] == 3 and j['devices'][4]['state'] == 'spare'" \
  "j['working'] == 4 and j['devices'][2]['path'] == '$T/ro3.ctl/s0.img'" \
  degraded=true
echo "ok: nbdkit -r and --readonly write nothing, not even metadata"
