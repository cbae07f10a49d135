#!/usr/bin/env bash
# A journaled RAID5 killed with writes in its log that the members may
# not hold: a read-only start (readonly=true, nbdkit -r) cannot replay
# them, so it is refused with one line that says why and how, and
# writes nothing; a writable start replays them and serves every byte
# acknowledged; after a clean stop the log is empty and a read-only
# start serves the same bytes.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

dir=$T/jr
make_members "$dir" 4 8M
truncate -s 4M "$dir/journal.img"
# shellcheck disable=SC2046
write_config "$dir/a.conf" 5 left-symmetric 64K $(member_paths "$dir" 4)
conf=$dir/a.conf
array_option "consistency-policy = journal"
echo "journal = $dir/journal.img" >> "$conf"
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create: $(tail -1 "$T/create.log")"
start_server "$conf"
random_file "$T/data" 1048576
nbdcopy --flush "$T/data" "$uri"
crash_server
before=$(cat "$dir"/*.img | sha256sum)

for ro in readonly=true -r; do
  if [ "$ro" = -r ]; then args=(-r "$PLUGIN" "$conf"); else args=("$PLUGIN" "$conf" "$ro"); fi
  if out=$(nbdkit -U "$(new_socket)" "${args[@]}" --run true 2>&1); then
    die "a read-only start ($ro) with writes in the log worked: $out"
  fi
  grep -q "array test: its write journal $dir/journal.img holds [1-9][0-9]* stripe rows and 0 cached pages of writes the members may not have yet, which a read-only start cannot replay: start it writable once (without readonly=true or nbdkit -r)" <<< "$out" ||
    die "unclear refusal ($ro): $out"
  [ "$(cat "$dir"/*.img | sha256sum)" = "$before" ] || die "a refused read-only start ($ro) wrote"
  echo "ok: refused ($ro): $(grep -o 'array test: its write journal.*' <<< "$out" | head -1)"
done

start_server "$conf"
grep -q "write journal replayed [1-9]" "$T/nbdkit.log" || die "the writable start replayed nothing"
nbdcopy "$uri" "$T/out"
cmp -n 1048576 "$T/data" "$T/out" || die "the data differs after the replay"
stop_server
start_server "$conf" readonly=true
nbdcopy "$uri" "$T/out2"
cmp "$T/out" "$T/out2" || die "the read-only start after a clean stop differs"
stop_server
echo "ok: a journal with writes to replay refuses a read-only start; written once, it serves them"
