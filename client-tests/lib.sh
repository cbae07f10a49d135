# nbdraid client tests: shared helpers.  Source from a test script:
#   . "$(dirname "$0")/lib.sh"
# Every test runs in its own temporary directory, removed on exit;
# servers it starts are killed on exit.

set -eu
set -o pipefail

: "${abs_top_builddir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${abs_top_srcdir:=$abs_top_builddir}"
PLUGIN=$abs_top_builddir/plugins/raid/.libs/nbdkit-raid-plugin.so
NBDRAID=$abs_top_builddir/server/cli/nbdraid
MODEL="/usr/bin/python3 $abs_top_srcdir/client-tests/md-model.py"
# nbdsh's Python module lives in the system Python.
export PATH=/usr/bin:/usr/sbin:/sbin:$PATH

skip () { echo "SKIP: $*"; exit 77; }
die () { echo "FAIL: $*" >&2; exit 1; }

requires () {
  command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"
}

requires_root () {
  [ "$(id -u)" = 0 ] || skip "needs root"
}

# Cleanup actions run in reverse order of registration, on every exit.
_cleanups=()
cleanup_fn () { _cleanups+=("$*"); }
_run_cleanups () {
  local rc=$? i
  for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do
    eval "${_cleanups[$i]}" || :
  done
  exit $rc
}
trap _run_cleanups EXIT INT TERM

# make distcheck (from ./run-tests) runs only the unit tests; the suite
# itself already ran these.
[ -z "${NBDRAID_DISTCHECK:-}" ] || skip "client tests not run in distcheck"

T=$(mktemp -d "${TMPDIR:-/tmp}/nbdraid-test.XXXXXX")
cleanup_fn "rm -rf '$T'"

# Poll for a condition (a command) for up to $1 seconds.
wait_for () {
  local secs=$1 i
  shift
  for ((i = 0; i < secs * 10; i++)); do
    if "$@"; then return 0; fi
    sleep 0.1
  done
  return 1
}

# make_members DIR N SIZE: sparse member files DIR/d0.img ...
make_members () {
  local dir=$1 n=$2 size=$3 i
  mkdir -p "$dir"
  for ((i = 0; i < n; i++)); do
    truncate -s "$size" "$dir/d$i.img"
  done
}

# member_paths DIR N [ROLE SPARE]: the member paths in role order,
# SPARE in place of ROLE's member once it was rebuilt there
member_paths () {
  local i
  for ((i = 0; i < $2; i++)); do
    if [ "$i" = "${3-}" ]; then echo "$4"; else echo "$1/d$i.img"; fi
  done
}

# write_config FILE LEVEL LAYOUT CHUNK MEMBER...; "-" omits layout/chunk
write_config () {
  local file=$1 level=$2 layout=$3 chunk=$4 m
  shift 4
  {
    echo "[array]"
    echo "name = test"
    echo "socket = ${file%.conf}.sock"
    echo "level = $level"
    [ "$layout" = - ] || echo "layout = $layout"
    [ "$chunk" = - ] || echo "chunk = $chunk"
    echo "[members]"
    for m in "$@"; do echo "member = $m"; done
  } > "$file"
}

# A socket path of its own in $T, for nbdkit -U in place of -U -: with
# -U -, nbdkit 1.32 makes /tmp/nbdkitXXXXXX and leaves it behind when
# the plugin refuses to start, which these tests make it do.
new_socket () {
  mktemp -u "$T/nbdkit.XXXXXX"
}

# start_server CONFIG [plugin params...]: serve on $T/sock; sets $uri.
# Extra nbdkit options (filters, -r) go in the array nbdkit_opts.
# nbdkit runs in the foreground as our child, so stop_server can wait
# for it to exit.
start_server () {
  local conf=$1
  shift
  sock=$T/sock
  rm -f "$sock" "$T/nbdkit.pid"
  nbdkit -f -U "$sock" -P "$T/nbdkit.pid" ${nbdkit_opts[@]+"${nbdkit_opts[@]}"} \
    "$PLUGIN" "$conf" "$@" 2>> "$T/nbdkit.log" &
  server_pid=$!
  cleanup_fn "stop_server"
  # 30 s: over six NBD members that fork a script per request, a loaded
  # machine took more than 10.  A server that never started is named
  # below, with its log.
  wait_for 30 _started_or_gone || :
  if ! kill -0 "$server_pid" 2>/dev/null || ! [ -s "$T/nbdkit.pid" ]; then
    cat "$T/nbdkit.log" >&2
    die "nbdkit did not start"
  fi
  uri="nbd+unix:///?socket=$sock"
}

# crash_server: kill -9 the server (a crash, a power cut) and reap it;
# fails the test if it had died already
crash_server () {
  kill -9 "$server_pid"
  wait "$server_pid" 2>/dev/null || :
  server_pid=
}

_started_or_gone () {
  [ -s "$T/nbdkit.pid" ] || ! kill -0 "$server_pid" 2>/dev/null
}

stop_server () {
  [ -n "${server_pid:-}" ] || return 0
  kill "$server_pid" 2>/dev/null || :
  wait "$server_pid" 2>/dev/null || :
  server_pid=
}

# random_file FILE SIZE
random_file () {
  head -c "$2" /dev/urandom > "$1"
}

# new_array NAME LEVEL LAYOUT CHUNK N SIZE [create args]: members in
# $T/NAME, config $T/NAME/a.conf, created with nbdraid create.
new_array () {
  local name=$1 level=$2 layout=$3 chunk=$4 n=$5 size=$6
  shift 6
  local dir=$T/$name
  make_members "$dir" "$n" "$size"
  # shellcheck disable=SC2046
  write_config "$dir/a.conf" "$level" "$layout" "$chunk" \
    $(member_paths "$dir" "$n")
  "$NBDRAID" create "$@" "$dir/a.conf" 2>> "$T/create.log" ||
    { cat "$T/create.log" >&2; die "nbdraid create $name failed"; }
  conf=$dir/a.conf
  members=$(member_paths "$dir" "$n")
}

# array_option LINE...: the lines ("speed-max = 1M") go into $conf
# right after its [array] line, in order
array_option () {
  [ $# -gt 0 ] || return 0
  printf '%s\n' "$@" | sed -i '/^\[array\]$/r /dev/stdin' "$conf"
}

# named_array CONF NAME DIR LEVEL LAYOUT CHUNK N SIZE: like new_array,
# for the array NAME with its members in DIR and its config in CONF.
named_array () {
  local conf=$1 name=$2 dir=$3 level=$4 layout=$5 chunk=$6 n=$7 size=$8
  make_members "$dir" "$n" "$size"
  # shellcheck disable=SC2046
  write_config "$conf" "$level" "$layout" "$chunk" $(member_paths "$dir" "$n")
  sed -i "s/^name = test\$/name = $name/" "$conf"
  "$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
    die "nbdraid create $name: $(tail -1 "$T/create.log")"
}

export_size () {
  nbdinfo --size "$uri"
}

# The member files must hold exactly $1 as md lays it out, with every
# stripe's redundancy correct (an independent model, md-model.py).
check_members_hold () {
  local expect=$1
  # shellcheck disable=SC2086
  $MODEL image -o "$T/model.img" $members || die "md-model image failed"
  cmp "$expect" "$T/model.img" || die "members do not hold the data"
  # shellcheck disable=SC2086
  $MODEL check $members > "$T/check.out" ||
    die "redundancy wrong: $(cat "$T/check.out")"
}

# roundtrip NAME LEVEL LAYOUT CHUNK N SIZE: random data in through nbdcopy
# with 4 connections, read back identical, members match the model.
roundtrip () {
  local name=$1
  new_array "$@"
  start_server "$conf"
  local size
  size=$(export_size)
  random_file "$T/$name.data" "$size"
  nbdcopy --connections=4 --flush "$T/$name.data" "$uri"
  nbdcopy "$uri" "$T/$name.out"
  cmp "$T/$name.data" "$T/$name.out" || die "$name: read back differs"
  stop_server
  check_members_hold "$T/$name.data"
  rm -f "$T/$name.data" "$T/$name.out" "$T/model.img"
  echo "ok: $name ($size bytes)"
}

declare -A member_pids=()

# start_member NAME FILE [OPTIONS... [-- PARAMS...]]: serve FILE with
# nbdkit's file plugin on $T/NAME.sock; OPTIONS (filters) go before the
# plugin, PARAMS (the filters' parameters) after the file.  Sets
# member_uri; the server is killed on exit.
start_member () {
  local name=$1 file=$2 opts=() params=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
  [ $# -gt 0 ] && { shift; params=("$@"); }
  rm -f "$T/$name.sock" "$T/$name.pid"
  nbdkit -f -U "$T/$name.sock" -P "$T/$name.pid" ${opts[@]+"${opts[@]}"} \
    file "$file" ${params[@]+"${params[@]}"} 2>> "$T/members.log" &
  member_pids[$name]=$!
  disown $!                     # no job notices when it is killed
  cleanup_fn "kill -9 $! 2>/dev/null"
  wait_for 10 test -s "$T/$name.pid" || die "member server $name did not start"
  member_uri="nbd+unix:///?socket=$T/$name.sock"
}

# kill_member NAME: SIGKILL a member server (a pulled disk, a dead host);
# one that died by itself already is as good
kill_member () {
  local pid=${member_pids[$1]}
  kill -9 "$pid" 2>/dev/null || :
  wait_for 10 sh -c "! kill -0 $pid 2>/dev/null" || die "member $1 lives on"
}

# nbd_array NAME LEVEL LAYOUT CHUNK N SIZE [start_member args for all]:
# members are files $T/NAME/dI.img served by nbdkit as NAME-I; config
# $T/NAME/a.conf lists their URIs (a short request timeout: 3 s).
# With nbd_spares=N, N spares sI.img are served as NAME-sI and listed.
# nbdraid create gets the options in the array create_opts.
nbd_array () {
  local name=$1 level=$2 layout=$3 chunk=$4 n=$5 size=$6 i uris=()
  shift 6
  make_members "$T/$name" "$n" "$size"
  for ((i = 0; i < n; i++)); do
    start_member "$name-$i" "$T/$name/d$i.img" "$@"
    uris+=("$member_uri")
  done
  write_config "$T/$name/a.conf" "$level" "$layout" "$chunk" "${uris[@]}"
  for ((i = 0; i < ${nbd_spares:-0}; i++)); do
    truncate -s "$size" "$T/$name/s$i.img"
    start_member "$name-s$i" "$T/$name/s$i.img"
    echo "spare = $member_uri" >> "$T/$name/a.conf"
  done
  printf 'nbd-timeout = 3\nnbd-connect-timeout = 3\n' > "$T/$name/timeouts"
  sed -i "/^\[array\]/r $T/$name/timeouts" "$T/$name/a.conf"
  "$NBDRAID" create ${create_opts[@]+"${create_opts[@]}"} "$T/$name/a.conf" \
    2>> "$T/create.log" ||
    { cat "$T/create.log" >&2; die "nbdraid create $name failed"; }
  conf=$T/$name/a.conf
  members=$(member_paths "$T/$name" "$n")
}

# status_json: the running array's nbdraid status --json ($conf)
status_json () {
  "$NBDRAID" status --json "$conf"
}

# last_work_bytes: bytes of each member the last resync or rebuild
# worked on
last_work_bytes () {
  status_json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["last_work_bytes"])'
}

# status_is PYTHON-EXPR: true if the expression holds for the status
# JSON, bound to j (e.g. 'j["clean"] and j["job"]["kind"] == "idle"')
status_is () {
  status_json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
sys.exit(0 if eval(sys.argv[1]) else 1)' "$1"
}

# wait_status SECONDS PYTHON-EXPR: poll until status_is holds
wait_status () {
  wait_for "$1" status_is "$2" ||
    die "status never got to: $2; it is: $(status_json 2>&1)"
}

# check_map NAME SIZE AT...: nbdinfo --map of $uri shows data over each
# 1 MiB piece written at AT, and holes over all but 8 MiB of the rest
check_map () {
  local name=$1
  shift
  nbdinfo --map "$uri" > "$T/map" || die "$name: nbdinfo --map failed"
  /usr/bin/python3 - "$T/map" "$@" <<'PY' || die "$name: $(cat "$T/map")"
import sys
size, pieces = int(sys.argv[2]), [int(a) for a in sys.argv[3:]]
extents = [tuple(int(x) for x in line.split()[:3])
           for line in open(sys.argv[1])]
holes = sum(length for _, length, kind in extents if kind & 2)
for at in pieces:
    for off, length, kind in extents:
        if off < at + (1 << 20) and at < off + length and kind & 2:
            sys.exit(f"the piece written at {at} is in a zero extent")
if holes < size - 8 * (1 << 20):
    sys.exit(f"only {holes} of {size} bytes reported as holes")
PY
}

# write_piece DATA AT: 1 MiB of random data at AT, through NBD ($uri)
# and into DATA, the image the volume should read back as
write_piece () {
  head -c $((1024 * 1024)) /dev/urandom > "$T/piece"
  dd if="$T/piece" of="$1" bs=1M seek="$2" oflag=seek_bytes conv=notrunc \
    status=none
  nbdsh -u "$uri" -c "h.pwrite(open('$T/piece', 'rb').read(), $2)" ||
    die "write of 1 MiB at $2 failed"
}

# fua_writes FILE SEED N: N small writes (4K to 12K, 4K-aligned) with
# FUA through $uri at seeded offsets, applied to FILE too, which holds
# what the export holds
fua_writes () {
  FUA_FILE=$1 FUA_SEED=$2 FUA_N=$3 nbdsh -u "$uri" -c '
import os, random
path = os.environ["FUA_FILE"]
seed, n = int(os.environ["FUA_SEED"]), int(os.environ["FUA_N"])
r = random.Random(seed)
data = bytearray(open(path, "rb").read())
for i in range(n):
    off = r.randrange(0, len(data) - 16384) // 4096 * 4096
    buf = r.randbytes(4096 * r.randrange(1, 4))
    h.pwrite(buf, off, nbd.CMD_FLAG_FUA)
    data[off:off + len(buf)] = buf
open(path, "wb").write(data)'
}

# failing_journal NAME SIZE [MODE]: a write journal for the array of
# nbd_array NAME, served from $T/NAME/j.img behind nbdkit's error
# filter (every write fails once $T/trigger exists), in MODE
# (write-through by default); the array created with it.
failing_journal () {
  local name=$1 size=$2 mode=${3:-write-through}
  truncate -s "$size" "$T/$name/j.img"
  start_member "$name-j" "$T/$name/j.img" --filter=error -- error=EIO \
    error-pwrite-rate=100% error-file="$T/trigger"
  sed -i "/^\[array\]/a consistency-policy = journal\njournal-mode = $mode" \
    "$conf"
  echo "journal = $member_uri" >> "$conf"
  "$NBDRAID" create --force "$conf" 2>> "$T/create.log" ||
    die "create: $(tail -1 "$T/create.log")"
}
