#!/usr/bin/env bash
# NBD members answer block status (base:allocation), so holes on them
# count as they do on files: the array's extents (nbdinfo --map) show
# them, and a rebuild reads from the members only what was written.
# Each member is nbdkit file over a sparse file, with the log filter
# counting what the array reads.  Two 1 MiB pieces are written through
# NBD, a third after the map was read (the members' answers are kept,
# and the write must count); a member is failed and rebuilt onto an NBD
# spare full of 0xff bytes.  The survivors must have been read for
# little more than the written pieces (of 32 MiB each), the volume must
# read back as written, the members must hold md's layout of it (the
# model) and the spare must be as sparse as the members.  Last, a
# member whose server fails block status counts as data, and the error
# is logged once per request rather than once per chunk.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh
requires nbdcopy
requires nbdinfo

MiB=$((1024 * 1024))

# bytes_read LOG FROM-LINE: bytes of the Read requests logged after line
bytes_read () {
  tail -n "+$(($2 + 1))" "$1" |
    sed -n 's/.* Read id=[0-9]* offset=0x[0-9a-f]* count=0x\([0-9a-f]*\) .*/\1/p' |
    while read -r hex; do echo $((16#$hex)); done |
    awk '{ s += $1 } END { print s + 0 }'
}

holes_case () {
  local level=$1 layout=$2 chunk=$3 n=$4 victim=$5 i size kib most=0 mark=()
  local rebuilt=()
  local uris=() d=$T/$1
  name=raid$level
  mkdir -p "$d"
  for ((i = 0; i < n; i++)); do
    truncate -s 32M "$d/d$i.img"
    start_member "$name-$i" "$d/d$i.img" --filter=log -- logfile="$d/d$i.log"
    uris+=("$member_uri")
  done
  head -c 32M /dev/zero | tr '\0' '\377' > "$d/s0.img"
  start_member "$name-s0" "$d/s0.img"
  write_config "$d/a.conf" "$level" "$layout" "$chunk" "${uris[@]}"
  conf=$d/a.conf
  "$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
    { cat "$T/create.log" >&2; die "$name: nbdraid create failed"; }
  start_server "$conf"
  size=$(export_size)
  truncate -s "$size" "$T/$name.data"
  local at=(0 $((size / 2 + 12345)))
  for a in "${at[@]}"; do write_piece "$T/$name.data" "$a"; done
  check_map "$name" "$size" "${at[@]}"
  # The members' last answers are kept (a hole from after the second
  # piece to the end); a write into that hole must count.
  at+=($((size * 3 / 4 + 777)))
  write_piece "$T/$name.data" "${at[2]}"
  nbdsh --base-allocation -u "$uri" -c "
flags = []
h.block_status($MiB, ${at[2]}, lambda ctx, off, e, err: flags.append(e[1]))
assert not flags[0] & 2, f'extent flags {flags[0]}'" ||
    die "$name: the piece written at ${at[2]} is called a hole"
  check_map "$name" "$size" "${at[@]}"
  for ((i = 0; i < n; i++)); do mark[i]=$(wc -l < "$d/d$i.log"); done
  "$NBDRAID" fail "$conf" "$victim" > /dev/null || die "$name: fail refused"
  "$NBDRAID" add "$conf" "$member_uri" > /dev/null || die "$name: add refused"
  wait_status 60 "j['working'] == $n and j['job']['kind'] == 'idle'"
  # The rebuild's reads, before the reads of nbdcopy (whose read-ahead
  # windows read the holes around the pieces too).
  for ((i = 0; i < n; i++)); do
    rebuilt[i]=$(bytes_read "$d/d$i.log" "${mark[i]}")
  done
  nbdcopy "$uri" "$T/$name.out"
  stop_server
  cmp "$T/$name.data" "$T/$name.out" || die "$name: the volume differs"
  for ((i = 0; i < n; i++)); do
    [ "$i" = "$victim" ] && continue
    read_bytes=${rebuilt[i]}
    [ "$read_bytes" -le $((8 * MiB)) ] ||
      die "$name: the rebuild read $read_bytes bytes of member $i (32 MiB, 3 MiB written)"
    [ "$read_bytes" -gt "$most" ] && most=$read_bytes
  done
  members=$(member_paths "$d" "$n" "$victim" "$d/s0.img")
  check_members_hold "$T/$name.out"
  kib=$(du -k "$d/s0.img" | cut -f1)
  [ "$kib" -lt 8192 ] ||
    die "$name: the spare keeps $kib KiB allocated of 32768"
  echo "ok: $name over NBD members: holes in the map; member $victim rebuilt reading at most $most bytes of a survivor; $kib KiB of the spare allocated"
}

holes_case 1 - - 2 1
holes_case 5 left-symmetric 64K 3 0

# A member whose server fails block status (EIO) has data everywhere:
# the map still answers, calling it data, and the error is logged once
# per request, not once per chunk.
name=mute
d=$T/mute
mkdir -p "$d"
truncate -s 32M "$d/d0.img" "$d/d1.img"
start_member mute-0 "$d/d0.img" --filter=error -- error-extents=EIO \
  error-extents-rate=1
u0=$member_uri
start_member mute-1 "$d/d1.img"
write_config "$d/a.conf" 0 - 64K "$u0" "$member_uri"
conf=$d/a.conf
"$NBDRAID" create "$conf" 2>> "$T/create.log" ||
  { cat "$T/create.log" >&2; die "$name: nbdraid create failed"; }
start_server "$conf"
nbdinfo --map "$uri" > "$T/map" || die "$name: nbdinfo --map failed"
/usr/bin/python3 - "$T/map" <<'PY' || die "$name: $(cat "$T/map")"
import sys
units = 64 << 10
for off, length, kind in (tuple(int(x) for x in l.split()[:3])
                          for l in open(sys.argv[1])):
    # Member 0 holds the even chunks: none of them may be called zero.
    first, last = off // units, (off + length - 1) // units
    if kind & 2 and any(c % 2 == 0 for c in range(first, last + 1)):
        sys.exit(f"a chunk of the failing member is called zero at {off}")
PY
stop_server
errors=$(grep -c "member 0 .*block status at" "$T/nbdkit.log")
[ "$errors" -ge 1 ] && [ "$errors" -le 4 ] ||
  die "$name: $errors block status errors logged for one map"
echo "ok: a member failing block status counts as data, logged $errors time(s)"
