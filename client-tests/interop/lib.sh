# Helpers for the interop tests (a Linux md guest under qemu).  Source
# after client-tests/lib.sh:
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/interop/lib.sh"

GUEST=$abs_top_srcdir/client-tests/interop/guest.sh
GUEST_LIB=$abs_top_srcdir/client-tests/interop/guest-lib.sh
export GUEST_CONSOLE=$T/guest-console.log

# requires_guest: the guest can be built and boots here, or skip.
requires_guest () {
  local out rc=0
  out=$("$GUEST" prepare 2>&1) || rc=$?
  [ $rc = 0 ] && return 0
  [ $rc = 77 ] && skip "${out#SKIP: }"
  die "guest.sh prepare: $out"
}

# seeded_data FILE SIZE SEED: SIZE pseudo-random bytes, the same for the
# same SEED on every run.
seeded_data () {
  /usr/bin/python3 -c '
import random, sys
r = random.Random(sys.argv[3])
with open(sys.argv[1], "wb") as f:
    left = int(sys.argv[2])
    while left:
        n = min(left, 1 << 20)
        f.write(r.randbytes(n))
        left -= n' "$1" "$2" "$3"
}

md5 () { md5sum < "$1" | cut -d' ' -f1; }

# guest_script FILE: the guest helpers followed by the body on stdin.
guest_script () {
  { cat "$GUEST_LIB"; cat; echo 'finish'; } > "$1"
}

# guest_run NAME [guest.sh run options...] SCRIPT: boot, run SCRIPT; its
# output goes to $T/NAME.out and stdout.  Fails the test unless the
# script exits 0 (the guest helpers exit 1 after any FAIL line).
guest_run () {
  local name=$1 rc=0 start=$SECONDS
  shift
  "$GUEST" run "$@" > "$T/$name.out" 2>&1 || rc=$?
  sed "s/^/guest: /" "$T/$name.out"
  echo "guest boot $name took $((SECONDS - start)) s"
  [ $rc = 0 ] || die "guest run $name exited $rc"
}

# interop_config DIR LEVEL LAYOUT CHUNK N SIZE BITMAP: members
# DIR/d0.img... of SIZE, config DIR/a.conf; BITMAP is "none" or a
# bitmap-chunk size.
interop_config () {
  local dir=$1 level=$2 layout=$3 chunk=$4 n=$5 size=$6 bitmap=$7
  make_members "$dir" "$n" "$size"
  # shellcheck disable=SC2046
  write_config "$dir/a.conf" "$level" "$layout" "$chunk" \
    $(member_paths "$dir" "$n")
  if [ "$bitmap" = none ]; then
    sed -i '/^\[array\]/a bitmap = none' "$dir/a.conf"
  elif [ "$bitmap" != - ]; then
    sed -i "/^\[array\]/a bitmap-chunk = $bitmap" "$dir/a.conf"
  fi
  conf=$dir/a.conf
}

# disk_args NAME DIR N: guest.sh --disk options for DIR/dI.img as NAME-I
disk_args () {
  local i
  for ((i = 0; i < $3; i++)); do
    printf -- '--disk\n%s-%s=%s/d%s.img\n' "$1" "$i" "$2" "$i"
  done
}

# try_server CONFIG: like start_server, but if nbdkit does not start,
# return 1 with its messages in $server_log instead of failing the test.
try_server () {
  sock=$T/sock
  rm -f "$sock" "$T/nbdkit.pid"
  : > "$T/try.log"
  nbdkit -f -U "$sock" -P "$T/nbdkit.pid" "$PLUGIN" "$1" 2> "$T/try.log" &
  server_pid=$!
  wait_for 20 _started_or_gone
  server_log=$(tr '\n' ' ' < "$T/try.log")
  cat "$T/try.log" >> "$T/nbdkit.log"
  if ! kill -0 "$server_pid" 2>/dev/null || ! [ -s "$T/nbdkit.pid" ]; then
    stop_server
    return 1
  fi
  uri="nbd+unix:///?socket=$sock"
}
