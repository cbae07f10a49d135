#!/usr/bin/env bash
# spare-group, as mdadm's: arrays of one server with the same
# spare-group lend each other spares.  A RAID5 that loses a member and
# has no spare gets the free spare of a RAID1 of its group (not that of
# an array outside the group), rebuilds onto it, and the configs follow:
# the spare line leaves the lender's and joins the borrower's.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

etc=$T/etc
mkdir -p "$etc"
# array NAME LEVEL LAYOUT CHUNK N GROUP SPARE(yes|no)
array () {
  local name=$1 level=$2 layout=$3 chunk=$4 n=$5 group=$6 spare=$7 c
  c=$etc/$name.conf
  make_members "$T/$name" "$n" 8M
  # shellcheck disable=SC2046
  write_config "$c" "$level" "$layout" "$chunk" $(member_paths "$T/$name" "$n")
  sed -i "s/^name = test/name = $name/" "$c"
  [ "$group" = - ] || sed -i "/^\[members\]/i spare-group = $group" "$c"
  if [ "$spare" = yes ]; then
    truncate -s 8M "$T/$name/spare.img"
    echo "spare = $T/$name/spare.img" >> "$c"
  fi
  "$NBDRAID" create --assume-clean "$c" 2>> "$T/create.log" ||
    die "create $name: $(cat "$T/create.log")"
}
array lender 1 - - 2 pool yes
array needy 5 left-symmetric 64K 3 pool no
array loner 1 - - 2 - yes

start_server "dir=$etc"
u="nbd+unix:///needy?socket=$sock"
random_file "$T/data" "$(nbdinfo --size "$u")"
nbdcopy "$T/data" "$u"
"$NBDRAID" fail "$etc/needy.conf" 1 > /dev/null || die "fail refused"

conf=$etc/needy.conf
wait_status 20 "any(d['path'] == '$T/lender/spare.img' for d in j['devices'])"
"$NBDRAID" wait "$conf"
status_is "j['working'] == 3" || die "needy did not rebuild: $(status_json)"
conf=$etc/lender.conf
status_is "not any(d['state'] == 'spare' for d in j['devices'])" ||
  die "the lender kept its spare: $(status_json)"
conf=$etc/loner.conf
status_is "any(d['state'] == 'spare' for d in j['devices'])" ||
  die "the loner lost its spare: $(status_json)"
grep -q "^spare = $T/lender/spare.img" "$etc/needy.conf" ||
  die "needy's config: $(cat "$etc/needy.conf")"
grep -q "^spare = $T/lender/spare.img" "$etc/lender.conf" &&
  die "lender's config: $(cat "$etc/lender.conf")"
grep -q "info: array lender: spare $T/lender/spare.img goes to array needy (spare-group pool)" \
  "$T/nbdkit.log" || die "no lend line: $(cat "$T/nbdkit.log")"
grep -q "info: array needy: spare $T/lender/spare.img came from array lender" \
  "$T/nbdkit.log" || die "no take line: $(cat "$T/nbdkit.log")"
nbdcopy "$u" "$T/back" && cmp "$T/data" "$T/back" || die "needy lost data"
stop_server

# Served again from its config alone, the borrower has the spare in
# its role; the lender starts without it.
rm -f "$sock" "$T/nbdkit.pid"
start_server "dir=$etc"
conf=$etc/needy.conf
status_is "j['working'] == 3 and j['state'] == 'active'" ||
  die "needy after a restart: $(status_json)"
nbdcopy "$u" "$T/back" && cmp "$T/data" "$T/back" || die "needy lost data"
echo "ok: a spare moved within its spare-group, configs and all"
