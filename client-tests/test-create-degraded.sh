#!/usr/bin/env bash
# nbdraid create with "member = missing" (mdadm --create ... missing):
# the array is created without those roles, starts degraded without
# degraded=true (its superblocks record them as lost), holds what
# nbdcopy writes over half of it, and once spares are added and rebuilt
# every member holds what the array reads with correct redundancy
# (md-model), a check finds no mismatch and a restart still reads it.
# The members start full of old random bytes, as used disks do, so a
# stripe left inconsistent (a RAID6 less one whose parities disagree)
# shows.  Levels that cannot lose the roles are refused with a line
# naming them.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

# name level layout chunk members missing-roles (comma-separated)
cases="r1 1 - - 2 1
r5 5 left-symmetric 64K 3 0
r6two 6 left-symmetric 64K 4 1,3
r6one 6 right-asymmetric 32K 5 2
r10 10 n2 64K 4 0,3"

# degraded_config NAME LEVEL LAYOUT CHUNK N ROLES: $conf with ROLES'
# member lines saying missing, and no file for them
degraded_config () {
  local dir=$T/$1 r i
  mkdir -p "$dir"
  for ((i = 0; i < $5; i++)); do random_file "$dir/d$i.img" 8M; done
  # shellcheck disable=SC2046
  write_config "$dir/a.conf" "$2" "$3" "$4" $(member_paths "$dir" "$5")
  for r in ${6//,/ }; do
    sed -i "s|^member = $dir/d$r.img\$|member = missing|" "$dir/a.conf"
    rm "$dir/d$r.img"
  done
  conf=$dir/a.conf
}

while read -r name level layout chunk n roles; do
  degraded_config "$name" "$level" "$layout" "$chunk" "$n" "$roles"
  lost=$(echo "${roles//,/ }" | wc -w)
  out=$("$NBDRAID" create "$conf" 2>&1) || die "$name: create: $out"
  case $out in
    *"is created degraded, without role"*" ${roles//,/, }: nbdraid add rebuilds"*) ;;
    *) die "$name: create did not say it is degraded: $out" ;;
  esac
  if [ "$name" = r6one ]; then
    case $out in
      *"first rebuilds member 4 ($T/$name/d4.img) from the others"*) ;;
      *) die "$name: create did not say it rebuilds member 4: $out" ;;
    esac
  fi
  start_server "$conf"
  status_is "j['working'] == $n - $lost" || die "$name: $(status_json)"
  size=$(export_size)
  random_file "$T/data" $((size / 2))
  nbdcopy --connections=4 --flush "$T/data" "$uri"
  nbdcopy "$uri" "$T/out"
  cmp -n $((size / 2)) "$T/data" "$T/out" ||
    die "$name: degraded read back differs"

  members=$(member_paths "$T/$name" "$n")
  for r in ${roles//,/ }; do
    truncate -s 8M "$T/$name/s$r.img"
    "$NBDRAID" add "$conf" "$T/$name/s$r.img" > /dev/null
    "$NBDRAID" wait "$conf"
    members=${members/$T\/$name\/d$r.img/$T/$name/s$r.img}
  done
  wait_status 60 "j['working'] == $n and j['synced'] and j['job']['kind'] == 'idle'"
  "$NBDRAID" check "$conf" > /dev/null
  "$NBDRAID" wait "$conf"
  status_is "j['mismatches'] == 0" || die "$name: check: $(status_json)"
  nbdcopy "$uri" "$T/all"
  cmp -n $((size / 2)) "$T/data" "$T/all" ||
    die "$name: read back after the rebuilds differs"
  stop_server
  check_members_hold "$T/all"

  start_server "$conf"
  status_is "j['working'] == $n" || die "$name: restarted: $(status_json)"
  nbdcopy "$uri" "$T/out"
  cmp "$T/all" "$T/out" || die "$name: read back after the restart differs"
  stop_server
  echo "ok: $name created without roles $roles, rebuilt, checked"
done <<< "$cases"

# Roles the level cannot lose: refused, every member left untouched.
while read -r name level layout chunk n roles why; do
  degraded_config "$name" "$level" "$layout" "$chunk" "$n" "$roles"
  files=$(find "$T/$name" -name 'd*.img')
  for f in $files; do cp "$f" "$f.before"; done
  out=$("$NBDRAID" create "$conf" 2>&1) && die "$name: create succeeded"
  case $out in
    *"a.conf:"*": member = missing: RAID$level of $n members cannot lose $why; some of its data would have no copy") ;;
    *) die "$name: create refused with: $out" ;;
  esac
  for f in $files; do
    cmp "$f" "$f.before" || die "$name: refused create wrote $f"
  done
done <<'EOF'
bad0 0 - 64K 3 2 role 2
bad5 5 left-symmetric 64K 3 0,2 roles 0, 2
bad10 10 n2 64K 4 2,3 roles 2, 3
bad1 1 - - 2 0,1 roles 0, 1
EOF
echo "ok: creates without more than the level can lose"
