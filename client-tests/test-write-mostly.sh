#!/usr/bin/env bash
# member = URI write-mostly, md's --write-mostly: a RAID1 of a local
# file and a far NBD member reads only the local copy while it serves,
# and the far one once the local copy has failed.  The flag is md's:
# in the superblock's devflags, as nbdraid examine and mdadm --examine
# show; dropping it from the config drops it from the superblock.  On
# RAID5, or on every copy, it is refused naming the line.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

mkdir -p "$T/w"
truncate -s 16M "$T/w/d0.img" "$T/w/d1.img"
start_member far "$T/w/d1.img" --filter=log -- logfile="$T/far.log"
conf=$T/w/a.conf
write_config "$conf" 1 - - "$T/w/d0.img" "$member_uri"
sed -i "s|^member = $member_uri\$|member = $member_uri write-mostly|" "$conf"
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create: $(cat "$T/create.log")"
grep -q "^          Flags : write-mostly" <<< "$("$NBDRAID" examine "$member_uri")" ||
  die "examine shows no flag: $("$NBDRAID" examine "$member_uri")"
grep -q "Flags" <<< "$("$NBDRAID" examine "$T/w/d0.img")" &&
  die "the local copy has a flag"
if command -v mdadm > /dev/null; then
  grep -q "Flags : write-mostly" <<< "$(mdadm --examine "$T/w/d1.img")" ||
    die "mdadm --examine: $(mdadm --examine "$T/w/d1.img")"
fi

# reads_far: the read requests for data the far member has served so
# far (not of its superblock block, at 4K, which the heartbeat reads
# every second to see whether another host took the array over).
reads_far () { grep ' Read ' "$T/far.log" | grep -vc 'offset=0x1000 count=0x1000' || :; }

start_server "$conf"
status_is "j['devices'][1]['write_mostly'] and not j['devices'][0]['write_mostly']" ||
  die "status: $(status_json)"
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
before=$(reads_far)
for i in 1 2 3; do
  nbdcopy --connections=4 "$uri" "$T/back" && cmp "$T/data" "$T/back" ||
    die "read back differs"
done
[ "$(reads_far)" = "$before" ] ||
  die "the write-mostly member served $(( $(reads_far) - before )) reads"
"$NBDRAID" fail "$conf" 0 --force > /dev/null || die "fail refused"
nbdcopy "$uri" "$T/back" && cmp "$T/data" "$T/back" || die "far copy differs"
[ "$(reads_far)" -gt "$before" ] || die "the far copy did not serve alone"
stop_server
echo "ok: write-mostly read only once the local copy failed"

# The config drops the flag: the superblock follows.
sed -i "s| write-mostly\$||" "$conf"
: > "$T/nbdkit.log"
rm -f "$sock" "$T/nbdkit.pid"
start_server "$conf" degraded=true
grep -q "info: array test: the config's write-mostly and failfast flags go into the superblocks" \
  "$T/nbdkit.log" || die "no info line: $(cat "$T/nbdkit.log")"
grep -q "Flags" <<< "$("$NBDRAID" examine "$member_uri")" &&
  die "the flag stayed in the superblock"
stop_server
echo "ok: the config's flag reaches the superblock"

# Refused: on RAID5 members, on every copy.
printf '[array]\nname = x\nlevel = 5\n[members]\nmember = a.img\nmember = b.img write-mostly\nmember = c.img\n' > "$T/bad5.conf"
if out=$("$NBDRAID" create "$T/bad5.conf" 2>&1); then die "RAID5 write-mostly"; fi
grep -q "bad5.conf:6: write-mostly applies to the copies of RAID1 and RAID10, not to RAID5 members" <<< "$out" ||
  die "RAID5: $out"
printf '[array]\nname = x\nlevel = 1\n[members]\nmember = a.img write-mostly\nmember = b.img write-mostly\n' > "$T/all.conf"
if out=$("$NBDRAID" create "$T/all.conf" 2>&1); then die "all write-mostly"; fi
grep -q "all.conf:5: write-mostly on every member leaves no copy to read first" <<< "$out" ||
  die "every copy: $out"
echo "ok: write-mostly refused on RAID5 and on every copy"
