#!/usr/bin/env bash
# md arrays with features nbdraid does not serve are refused at assembly
# with a message naming the feature, and their members are left as they
# were: v1.0 and v0.90 metadata, RAID4 and a reshape in progress, each
# made by mdadm in a guest.  (A partial parity log and a write journal
# are served: test-interop-ppl.sh, test-interop-journal.sh.)
# nbdraid create, without --force, does not write over any of them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/interop/lib.sh"
requires nbdkit
requires_guest

# name level(config) devices pattern(the message must match, grep -Ei)
cases="v10 1 2 (v|version |metadata )1\.0
v090 1 2 0\.90
raid4 5 3 raid ?4|level 4
reshape 5 4 reshape"

disks=()
while read -r name level n pattern; do
  make_members "$T/$name" "$n" 8M
  mapfile -t -O ${#disks[@]} disks < <(disk_args "$name" "$T/$name" "$n")
done <<< "$cases"

guest_script "$T/guest.sh" <<'EOF2'
# make NAME MDADM-OPTIONS...: mdadm --create, wait for the resync, stop
make () {
  local name=$1
  shift
  if ! out=$(mdadm --create /dev/md0 --run "$@" 2>&1 < /dev/null); then
    echo "cannot $name: mdadm --create $*: $out"
    return 1
  fi
  wait_idle md0 || fail "$name: resync did not finish"
  mdadm --stop /dev/md0 > /dev/null 2>&1 || fail "$name: stop"
  echo "made $name"
}
make v10 --metadata=1.0 --level=1 --raid-devices=2 $(members v10 2)
make v090 --metadata=0.90 --level=1 --raid-devices=2 $(members v090 2)
make raid4 --level=4 --chunk=64K --raid-devices=3 $(members raid4 3)

# A reshape held almost still: RAID5 of 3 grows to 4 at 1 KB/s, then stops.
if out=$(mdadm --create /dev/md0 --run --level=5 --chunk=64K \
           --raid-devices=3 $(members reshape 3) 2>&1 < /dev/null); then
  wait_idle md0
  echo 1 > /proc/sys/dev/raid/speed_limit_min
  echo 1 > /proc/sys/dev/raid/speed_limit_max
  mdadm --add /dev/md0 /dev/disk/reshape-3 > /dev/null 2>&1
  if out=$(mdadm --grow /dev/md0 --raid-devices=4 \
             --backup-file=/tmp/reshape.backup 2>&1 < /dev/null); then
    i=0
    until grep -q reshape /proc/mdstat || [ $i -gt 100 ]; do
      i=$((i + 1))
      sleep 0.1
    done
    grep -A3 '^md0' /proc/mdstat
    mdadm --stop /dev/md0 > /dev/null 2>&1 || fail "reshape: stop"
    mdadm --examine /dev/disk/reshape-0 | grep -q 'Reshape pos' &&
      echo "made reshape"
  else
    echo "cannot reshape: mdadm --grow: $out"
    mdadm --stop /dev/md0 > /dev/null 2>&1
  fi
else
  echo "cannot reshape: mdadm --create: $out"
fi
EOF2
guest_run md-features "${disks[@]}" "$T/guest.sh"

bad=() made=0
while read -r name level n pattern; do
  if ! grep -q "^made $name\$" "$T/md-features.out"; then
    echo "SKIP: $name: mdadm could not make it here"
    continue
  fi
  made=$((made + 1))
  # shellcheck disable=SC2046
  write_config "$T/$name/a.conf" "$level" - - $(member_paths "$T/$name" "$n")
  sums=$(md5sum "$T/$name"/*.img)
  rm -f "$T/x.pid" "$T/x.sock"
  nbdkit -f -U "$T/x.sock" -P "$T/x.pid" "$PLUGIN" "$T/$name/a.conf" \
    > "$T/$name.log" 2>&1 &
  pid=$!
  wait_for 20 sh -c "[ -s '$T/x.pid' ] || ! kill -0 $pid 2>/dev/null"
  # The member paths name the case; the message must name the feature.
  msg=$(sed "s|$T/[^ :)]*|PATH|g" "$T/$name.log" | tr '\n' ' ')
  if [ -s "$T/x.pid" ]; then
    kill "$pid"; wait "$pid" 2>/dev/null || :
    bad+=("$name: nbdkit raid serves it: $msg")
  elif ! echo "$msg" | grep -Eqi "$pattern"; then
    wait "$pid" 2>/dev/null || :
    bad+=("$name: refused, but the message does not name it: $msg")
  else
    wait "$pid" 2>/dev/null || :
    echo "ok: $name refused: $msg"
  fi
  [ "$(md5sum "$T/$name"/*.img)" = "$sums" ] ||
    bad+=("$name: nbdkit raid changed the members")
  # nbdraid create, without --force, must not write over md's array.
  if out=$("$NBDRAID" create "$T/$name/a.conf" 2>&1); then
    bad+=("$name: nbdraid create (no --force) wrote over md's array: $out")
  else
    echo "ok: $name: nbdraid create refuses: $(echo "$out" | sed "s|$T/[^ :)]*|PATH|g")"
  fi
  [ "$(md5sum "$T/$name"/*.img)" = "$sums" ] ||
    bad+=("$name: nbdraid create changed the members")
done <<< "$cases"
[ $made -gt 0 ] || die "mdadm made none of the arrays"
if [ ${#bad[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${bad[@]}"
  die "${#bad[@]} unsupported arrays not refused as they should be"
fi
echo "ok: every unsupported md array is refused by name"
