#!/usr/bin/env bash
# Nested arrays grow group by group, as an admin of md's stacked arrays
# does: a RAID1 mirroring two RAID5 groups of 4 members, each group
# given a fifth with nbdraid add --array GROUP and nbdraid grow
# --array GROUP --raid-devices 5 (a reshape inside, the array above
# served throughout: nbdcopy keeps reading the same data), one after
# the other; then nbdraid grow --size max on the top takes the room the
# groups gained, and resyncs it.  Every byte written before reads back,
# the new space reads as zeros, check finds no mismatch on the top or in
# a group, and a restart serves the grown array the same.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy
requires nbdinfo

d=$T/n
mkdir -p "$d"
{
  printf '[array]\nname = top\nsocket = %s\nlevel = 1\n' "$d/top.sock"
  printf '[members]\nmember = array:g0\nmember = array:g1\n'
  for g in 0 1; do
    printf '[array g%s]\nlevel = 5\nchunk = 64K\n[members g%s]\n' "$g" "$g"
    for i in 0 1 2 3; do
      truncate -s 34M "$d/g$g-d$i.img"
      echo "member = g$g-d$i.img"
    done
    truncate -s 34M "$d/g$g-d4.img"
  done
} > "$d/top.conf"
conf=$d/top.conf
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create failed: $(tail -1 "$T/create.log")"
start_server "$conf"
size=$(export_size)
random_file "$T/data" "$size"
nbdcopy --flush "$T/data" "$uri"

for g in 0 1; do
  "$NBDRAID" add "$conf" "$d/g$g-d4.img" --array g$g > /dev/null || die "add to g$g refused"
  out=$("$NBDRAID" grow "$conf" --raid-devices 5 --array g$g) || die "grow of g$g refused: $out"
  echo "$out"
  nbdcopy "$uri" "$T/out"
  cmp "$T/data" "$T/out" || die "the data differs while g$g reshapes"
  "$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
  "$NBDRAID" status --json "$conf" --array g$g |
    /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if j["members"] == 5 and j["job"]["kind"] == "idle" else 1)' ||
    die "g$g is not 5 members: $("$NBDRAID" status "$conf" --array g$g)"
done
[ "$(export_size)" = "$size" ] || die "the top changed size before its own grow"
out=$("$NBDRAID" grow "$conf" --size max) || die "grow --size of the top refused: $out"
echo "$out"
"$NBDRAID" wait "$conf" > /dev/null || die "wait failed"
new=$(export_size)
[ "$new" -gt "$size" ] || die "the top did not grow: $new bytes"
nbdcopy "$uri" "$T/out"
cmp -n "$size" "$T/data" "$T/out" || die "the data differs after the grow"
cmp -n "$((new - size))" -i "$size:0" "$T/out" /dev/zero || die "the new space is not zeros"
for g in "" g0 g1; do
  "$NBDRAID" check "$conf" ${g:+--array $g} > /dev/null || die "check ${g:-top} refused"
  "$NBDRAID" wait "$conf" > /dev/null
  "$NBDRAID" status --json "$conf" ${g:+--array $g} |
    /usr/bin/python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["mismatches"] == 0 else 1)' ||
    die "check ${g:-top} found mismatches"
done
stop_server
start_server "$conf"
[ "$(export_size)" = "$new" ] || die "restarted at $(export_size) bytes, not $new"
nbdcopy "$uri" "$T/out2"
cmp "$T/out" "$T/out2" || die "the data differs after a restart"
stop_server
echo "ok: two RAID5 groups grew to 5 members one after the other, then the RAID1 on them from $size to $new bytes"
