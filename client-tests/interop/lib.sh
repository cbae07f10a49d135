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

# add_disks NAME DIR N: disk_args appended to the array disks
add_disks () {
  mapfile -t -O ${#disks[@]} disks < <(disk_args "$@")
}

# interop_array DIR LEVEL LAYOUT CHUNK N SIZE BITMAP: interop_config,
# then nbdraid create --assume-clean
interop_array () {
  interop_config "$@"
  "$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
    { cat "$T/create.log" >&2; die "nbdraid create $(basename "$1") failed"; }
}

# flagged_mirror NAME BITMAP FLAGS [ARRAY-LINE...]: a 2-member RAID1 of
# 8M in $T/NAME (BITMAP as for interop_config) with FLAGS on member 1's
# config line and the ARRAY-LINEs in its [array] section, created.
flagged_mirror () {
  local name=$1 bitmap=$2 flags=$3
  shift 3
  interop_config "$T/$name" 1 - - 2 8M "$bitmap"
  sed -i "s|^member = $T/$name/d1.img\$|& $flags|" "$conf"
  array_option "$@"
  "$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
    die "create: $(cat "$T/create.log")"
}

# md_mirror_config NAME FLAGS [ARRAY-LINE...]: $conf is $T/NAME/a.conf,
# array NAME, for the RAID1 mdadm made of $T/NAME/d0.img and d1.img,
# FLAGS on member 1's line, the ARRAY-LINEs in [array].
md_mirror_config () {
  local name=$1 flags=$2
  shift 2
  conf=$T/$name/a.conf
  write_config "$conf" 1 - - "$T/$name/d0.img" "$T/$name/d1.img $flags"
  sed -i "s/^name = test\$/name = $name/" "$conf"
  array_option "$@"
}

# md_array_served NAME SIZE: nbdkit raid serves the array the guest's
# mdadm made in $T/NAME (its config $T/NAME/a.conf) at SIZE bytes, the
# first SIZE of $T/src.img, and takes new seeded data ($T/data, seed
# NAME-2) through 4 connections; the server is stopped after.  Else 1,
# with the reason in why (the caller runs it in a condition, where
# set -e does not stop at a failed command: each is tested here).
md_array_served () {
  local a=$1 size=$2
  if ! try_server "$T/$a/a.conf"; then
    why="nbdkit raid refuses md's array: $server_log"
    return 1
  fi
  if [ "$(export_size)" != "$size" ]; then
    why="nbdraid serves $(export_size) bytes, md made $size"
  elif ! nbdcopy "$uri" "$T/out" || ! cmp "$T/out" <(head -c "$size" "$T/src.img"); then
    why="nbdraid reads other data than md wrote"
  elif ! seeded_data "$T/data" "$size" "$a-2" ||
       ! nbdcopy --connections=4 --flush "$T/data" "$uri"; then
    why="writing new data through nbdraid failed"
  else
    stop_server
    return 0
  fi
  stop_server
  return 1
}

# fill_served SEED: once the served array ($conf) is synced and idle,
# write seeded data ($T/data) over all of it and flush; sets size and
# sum (its md5)
fill_served () {
  "$NBDRAID" wait "$conf" > /dev/null
  wait_status 60 'j["synced"] and j["job"]["kind"] == "idle"'
  size=$(export_size)
  seeded_data "$T/data" "$size" "$1"
  nbdcopy --flush "$T/data" "$uri"
  sum=$(md5 "$T/data")
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

# reshape_level LEVEL: the 4-member array the reshape tests grow, of
# LEVEL (0, 5, 6 or 10): sets level, name (rLEVEL), data_members (for
# a near-2 RAID10, the members: its size grows as a RAID0's) and layout
# (left-symmetric; - for a RAID0, n2 for a RAID10).
reshape_level () {
  level=$1
  name=r$level
  data_members=$((level == 0 || level == 10 ? 4 : level == 5 ? 3 : 2))
  layout=left-symmetric
  if [ "$level" = 0 ]; then layout=-; fi
  if [ "$level" = 10 ]; then layout=n2; fi
}

# journaled_unclean DIR LEVEL N MODE SEED: a RAID5 or RAID6 of N in DIR
# with a write journal in MODE (write-through or write-back), seeded
# data written through NBD, small FUA writes last, then the server
# killed with -9: its log holds those writes past its tail.  Sets size
# and sum (the data's md5).
journaled_unclean () {
  local dir=$1 level=$2 n=$3 mode=$4 seed=$5
  interop_config "$dir" "$level" left-symmetric 64K "$n" 16M -
  truncate -s 8M "$dir/journal.img"
  sed -i "/^\[array\]/a consistency-policy = journal\njournal-mode = $mode" \
    "$conf"
  echo "journal = $dir/journal.img" >> "$conf"
  "$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
    die "create: $(cat "$T/create.log")"
  start_server "$conf"
  size=$(export_size)
  seeded_data "$T/data" "$size" "$seed"
  nbdcopy --flush "$T/data" "$uri"
  fua_writes "$T/data" 7 40
  [ "$mode" = write-through ] ||
    status_is "j['journal']['cached_bytes'] > 0" ||
    die "nothing cached before the kill: $(status_json)"
  kill -9 "$server_pid"
  wait "$server_pid" 2>/dev/null || :
  server_pid=
  sum=$(md5 "$T/data")
}
