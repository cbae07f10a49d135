#!/usr/bin/env bash
# Quick re-add: an NBD member whose server dies (a host reboots) misses a
# few MiB of writes to a small region; when it is back, nbdraid re-add
# recovers only the regions the bitmap marks (bytes rebuilt << its
# size) and the member then holds md's layout.  With auto-readd = true
# the array does it by itself.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

readd_case () {
  local name=$1 auto=$2 rebuilt member_bytes
  create_opts=(--assume-clean)
  nbd_array "$name" 5 left-symmetric 64K 4 34M
  printf 'bitmap-chunk = 64K\nauto-readd = %s\n' "$auto" > "$T/opts"
  sed -i "/^\[array\]/r $T/opts" "$conf"
  "$NBDRAID" create --force --assume-clean "$conf" 2>> "$T/create.log"
  start_server "$conf"
  member_bytes=$(status_json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["member_bytes"])')
  random_file "$T/$name.data" "$(export_size)"
  nbdcopy "$T/$name.data" "$uri"
  # The first copy dirtied every region: let the bitmap clear them.
  wait_status 30 "j['bitmap']['dirty'] == 0"
  kill_member "$name-1"
  # The first 2 MiB, while member 1 is away.
  head -c 2M /dev/urandom > "$T/$name.part"
  nbdcopy "$T/$name.part" "$uri"
  dd if="$T/$name.part" of="$T/$name.data" conv=notrunc status=none
  wait_status 10 "j['devices'][1]['state'] == 'faulty'"
  start_member "$name-1" "$T/$name/d1.img"
  if [ "$auto" = false ]; then
    "$NBDRAID" re-add "$conf" "nbd+unix:///?socket=$T/$name-1.sock" > /dev/null ||
      die "$name: re-add refused"
  fi
  wait_status 30 "j['working'] == 4 and j['job']['kind'] == 'idle'"
  rebuilt=$(last_work_bytes)
  [ "$rebuilt" -gt 0 ] && [ "$rebuilt" -lt $((member_bytes / 8)) ] ||
    die "$name: re-add rebuilt $rebuilt of $member_bytes bytes: $(grep re-added "$T/nbdkit.log")"
  nbdcopy "$uri" "$T/$name.out"
  stop_server
  cmp "$T/$name.data" "$T/$name.out" || die "$name: data differs"
  check_members_hold "$T/$name.data"
  echo "ok: $name: re-add (auto-readd=$auto) rebuilt $rebuilt of $member_bytes bytes"
}

readd_case manual false
readd_case auto true
