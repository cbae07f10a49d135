#!/usr/bin/env bash
# member = URI failfast, md's --failfast: a mirror copy that returns a
# read error is failed at once, and the client still gets its data from
# the other copy, where a copy without the flag is repaired and kept;
# but the last copy is never failed for it (md's rule).  The flag is
# md's, in the superblock: examine shows it.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

# mirror NAME FLAGS: RAID1 of a file and an NBD member that fails every
# read while $T/NAME.trigger exists; sets conf, member_uri
mirror () {
  mkdir -p "$T/$1"
  truncate -s 16M "$T/$1/d0.img" "$T/$1/d1.img"
  start_member "$1" "$T/$1/d1.img" --filter=error -- error-pread=EIO \
    error-pread-rate=100% error-pread-file="$T/$1.trigger"
  conf=$T/$1/a.conf
  write_config "$conf" 1 - - "$T/$1/d0.img" "$member_uri $2"
  sed -i "s/^name = test\$/name = $1/" "$conf"
  "$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
    die "create $1: $(cat "$T/create.log")"
}

# read_all: the whole array read back, three times, must equal the data
read_all () {
  local i
  for i in 1 2 3; do
    nbdcopy --connections=4 "$uri" "$T/back" && cmp "$T/data" "$T/back" ||
      return 1
  done
}

mirror ff failfast
grep -q "Flags : failfast" <<< "$("$NBDRAID" examine "$member_uri")" ||
  die "examine: $("$NBDRAID" examine "$member_uri")"
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
touch "$T/ff.trigger"
read_all || die "a client read failed with a failfast copy failing"
status_is "j['devices'][1]['state'] == 'faulty' and j['devices'][1]['failfast']" ||
  die "the failfast copy was not failed: $(status_json)"
stop_server
echo "ok: a failfast copy failed at its first read error, reads served"

mirror keep ""
start_server "$conf"
nbdcopy "$T/data" "$uri"
touch "$T/keep.trigger"
read_all || die "a client read failed"
status_is "j['devices'][1]['state'] == 'active' and j['devices'][1]['corrected_reads'] > 0" ||
  die "a copy without failfast was not kept and repaired: $(status_json)"
stop_server
echo "ok: a copy without the flag is repaired and kept"

mirror last failfast
start_server "$conf"
nbdcopy "$T/data" "$uri"
"$NBDRAID" fail "$conf" 0 --force > /dev/null || die "fail 0 refused"
touch "$T/last.trigger"
if nbdcopy "$uri" "$T/back" 2> /dev/null; then
  die "a read with no copy left to read succeeded"
fi
status_is "j['devices'][1]['state'] == 'active' and not j['failed']" ||
  die "the last copy was failed: $(status_json)"
rm "$T/last.trigger"
nbdcopy "$uri" "$T/back" && cmp "$T/data" "$T/back" ||
  die "the last copy does not read back once its errors stop"
stop_server
echo "ok: the last copy is not failed for failfast"

printf '[array]\nname = x\nlevel = 6\n[members]\nmember = a.img failfast\nmember = b.img\nmember = c.img\nmember = d.img\n' > "$T/bad.conf"
if out=$("$NBDRAID" create "$T/bad.conf" 2>&1); then die "RAID6 failfast"; fi
grep -q "bad.conf:5: failfast applies to the copies of RAID1 and RAID10, not to RAID6 members" <<< "$out" ||
  die "RAID6 failfast: $out"
echo "ok: failfast refused on RAID6"
