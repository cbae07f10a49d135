#!/usr/bin/env bash
# nbdraid detail shows an array as mdadm --detail shows an md device:
# level, sizes, counts of active, working, failed and spare devices,
# md's state words, layout and chunk, the consistency policy, UUID,
# events, and a line per device; the counts and state follow a failure.
# Piped into grep -q it exits 0, as status does.
. "$(dirname "$0")/lib.sh"
requires nbdkit

# field NAME: the value of "NAME : value" in $T/detail
field () { sed -n "s/^ *$1 : //p" "$T/detail"; }

new_array r6 6 left-symmetric 64K 6 8M --assume-clean
truncate -s 8M "$T/r6/s0.img"
echo "spare = $T/r6/s0.img" >> "$conf"
"$NBDRAID" create --force --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create failed"
start_server "$conf"
"$NBDRAID" detail "$conf" > "$T/detail" || die "detail failed"
uuid=$(status_json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["uuid"])')
for want in "Raid Level=raid6" "Raid Devices=6" "Total Devices=7" \
            "Active Devices=6" "Working Devices=7" "Failed Devices=0" \
            "Spare Devices=1" "Layout=left-symmetric" "Chunk Size=64K" \
            "Consistency Policy=bitmap" "UUID=$uuid" "Name=test" \
            "Intent Bitmap=Internal"; do
  [ "$(field "${want%%=*}")" = "${want#*=}" ] ||
    die "detail: ${want%%=*} is '$(field "${want%%=*}")', not '${want#*=}': $(cat "$T/detail")"
done
field "State" | grep -Eq '^(clean|active)$' || die "state: $(field State)"
[ "$(field "Array Size" | cut -d' ' -f1)" = "$(( $(export_size) / 1024 ))" ] ||
  die "array size: $(field "Array Size")"
grep -Eq "^ +6 +- +spare +$T/r6/s0.img\$" "$T/detail" || die "$(cat "$T/detail")"

# Scripts test the state with grep -q under pipefail: grep leaves at the
# first match, and the tool must not die of SIGPIPE writing the rest.
for verb in detail status; do
  for i in 1 2 3 4 5 6 7 8 9 10; do
    (set -o pipefail; "$NBDRAID" $verb "$conf" | grep -q .) ||
      die "nbdraid $verb | grep -q: exit $? (SIGPIPE?) on try $i"
  done
done

# A failure: the spare takes over; until it has, the array is degraded.
"$NBDRAID" speed-limit "$conf" 1 1 > /dev/null
"$NBDRAID" fail "$conf" 2 > /dev/null || die "fail refused"
wait_status 20 "j['job']['kind'] == 'recovery'"
"$NBDRAID" detail "$conf" > "$T/detail" || die "detail failed"
field "State" | grep -Eq '^(clean|active), degraded, recovering$' ||
  die "state while recovering: $(field State)"
[ "$(field "Failed Devices")" = 1 ] && [ "$(field "Active Devices")" = 5 ] ||
  die "counts while recovering: $(cat "$T/detail")"
grep -Eq "^ +2 +2 +spare rebuilding +$T/r6/s0.img\$" "$T/detail" ||
  die "the rebuilding spare: $(cat "$T/detail")"
grep -Eq "faulty +$T/r6/d2.img\$" "$T/detail" || die "$(cat "$T/detail")"
field "Rebuild Status" | grep -Eq '^[0-9]+% complete$' ||
  die "rebuild status: $(cat "$T/detail")"
stop_server

# RAID0 has no consistency to keep.
new_array r0 0 - 64K 2 8M
start_server "$conf"
"$NBDRAID" detail "$conf" > "$T/detail"
[ "$(field "Consistency Policy")" = none ] || die "RAID0: $(cat "$T/detail")"
stop_server
echo "ok: detail as mdadm --detail, through a failure and a rebuild"
