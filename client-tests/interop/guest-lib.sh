# Helpers for scripts run in the interop guest (busybox sh), prepended
# by guest_script.  Each check prints "ok: ..." or "FAIL: ..."; finish
# exits 1 if anything failed.
fails=0
echo "kernel $(uname -r), $(mdadm --version 2>&1)"
fail () { echo "FAIL: $*"; fails=$((fails + 1)); }
ok () { echo "ok: $*"; }
finish () {
  echo "guest: $fails failures"
  [ "$fails" = 0 ]
}

# members NAME N [LEAVE-OUT]: /dev/disk/NAME-0 ... in role order
members () {
  local i=0
  while [ $i -lt "$2" ]; do
    [ "$i" = "${3:--1}" ] || echo "/dev/disk/$1-$i"
    i=$((i + 1))
  done
}

# wait_idle MD: the md array's sync action finished (300 s at most);
# RAID0 has none.
wait_idle () {
  local i=0
  [ -e "/sys/block/$1/md/sync_action" ] || return 0
  mdadm --wait "/dev/$1" > /dev/null 2>&1 || :
  while [ "$(cat "/sys/block/$1/md/sync_action")" != idle ]; do
    i=$((i + 1))
    [ $i -gt 1500 ] && return 1
    sleep 0.2
  done
}

# md_check WHAT MD: echo check, wait, mismatch_cnt must be 0
md_check () {
  wait_idle "$2" || { fail "$1: resync did not finish"; return; }
  echo check > "/sys/block/$2/md/sync_action" ||
    { fail "$1: cannot start check"; return; }
  wait_idle "$2" || { fail "$1: check did not finish"; return; }
  local mm
  mm=$(cat "/sys/block/$2/md/mismatch_cnt")
  if [ "$mm" = 0 ]; then ok "$1: check, mismatch_cnt 0"
  else fail "$1: check found mismatch_cnt $mm"; fi
}

# md_holds WHAT DEV SIZE MD5 [BYTES]: DEV is SIZE bytes with that
# md5sum (of its first BYTES, if given)
md_holds () {
  local size sum
  size=$(blockdev --getsize64 "$2")
  [ "$size" = "$3" ] || { fail "$1: size $size, expected $3"; return; }
  sum=$(head -c "${5:-$size}" "$2" | md5sum | cut -d' ' -f1)
  if [ "$sum" = "$4" ]; then ok "$1: $size bytes, data matches"
  else fail "$1: md5 $sum, expected $4"; fi
}

# examine_bitmap WHAT DEV CHUNK: mdadm -X on DEV is sane: the bitmap's
# magic, version, array UUID and event count agree with the superblock,
# its chunk is CHUNK (like "1 MB").
examine_bitmap () {
  local x e uuid events
  x=$(mdadm -X "$2" 2>&1) || { fail "$1: mdadm -X $2: $x"; return; }
  e=$(mdadm --examine "$2" 2>&1)
  uuid=$(echo "$e" | sed -n 's/^ *Array UUID : //p')
  events=$(echo "$e" | sed -n 's/^ *Events : //p')
  echo "$x" | grep -q 'Magic : 6d746962' || { fail "$1: -X magic: $x"; return; }
  echo "$x" | grep -q 'Version : 4' || { fail "$1: -X version: $x"; return; }
  echo "$x" | grep -q "UUID : $uuid" || { fail "$1: -X uuid, sb $uuid: $x"; return; }
  echo "$x" | grep -q "^ *Events : $events\$" ||
    { fail "$1: -X events, sb $events: $x"; return; }
  echo "$x" | grep -q "Chunksize : $3" || { fail "$1: -X chunk: $x"; return; }
  ok "$1: mdadm -X: $(echo "$x" | sed -n 's/^ *Bitmap : //p')"
}

# md_assemble WHAT MD MEMBER...: mdadm --assemble /dev/MD, or FAIL and
# return 1
md_assemble () {
  local what=$1 md=$2 out
  shift 2
  out=$(mdadm --assemble "/dev/$md" "$@" 2>&1) && return 0
  fail "$what: mdadm --assemble: $out"
  return 1
}

# md_create WHAT MD OPTION...: mdadm --create /dev/MD (metadata 1.2)
# with the OPTIONs and member devices, or FAIL and return 1
md_create () {
  local what=$1 md=$2 out
  shift 2
  out=$(mdadm --create "/dev/$md" --run --metadata=1.2 "$@" 2>&1 < /dev/null) &&
    return 0
  fail "$what: mdadm --create: $out"
  return 1
}

# md_stop WHAT MD: mdadm --stop /dev/MD
md_stop () {
  mdadm --stop "/dev/$2" > /dev/null 2>&1 || fail "$1: mdadm --stop"
}

# md_verified WHAT MD SIZE MD5: the assembled MD holds the data
# (md_holds), its check finds no mismatch; stop it
md_verified () {
  md_holds "$1" "/dev/$2" "$3" "$4"
  md_check "$1" "$2"
  md_stop "$1" "$2"
}
