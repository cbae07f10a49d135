#!/usr/bin/env bash
# The copies family's writes wait only for writes they overlap.  A
# RAID1 of two NBD members that take 20 ms a write, in parallel:
# sixteen 4K writes into one 128K unit, sent at once, are all at
# member 0 at once (its log filter says), where a lock per unit sent
# them one at a time.  Then over two members that sleep a random 0-8
# ms before each write (jittery-member.sh), so that writes in flight
# land out of order, three clients writing overlapping ranges at
# random leave the two copies equal, byte for byte.  And on O_DIRECT
# members (direct = true), where a write of part of a 4K block reads
# and writes back the whole block, three clients writing 512-byte
# slots that share blocks but never overlap lose none of them.
. "$(dirname "$0")/lib.sh"
requires nbdkit
/usr/bin/python3 -c 'import nbd' 2>/dev/null || skip "python3-libnbd missing"
nbdkit sh --version >/dev/null 2>&1 || skip "nbdkit has no sh plugin"

# serve_raid1 NAME URI...: create the RAID1 $T/NAME/a.conf of the
# members, without a bitmap, and serve it; sets conf
serve_raid1 () {
  local name=$1
  shift
  write_config "$T/$name/a.conf" 1 - - "$@"
  sed -i '/^\[array\]/a nbd-timeout = 10\nbitmap = none' "$T/$name/a.conf"
  "$NBDRAID" create --assume-clean "$T/$name/a.conf" 2>> "$T/create.log" ||
    { cat "$T/create.log" >&2; die "nbdraid create $name failed"; }
  conf=$T/$name/a.conf
  start_server "$conf"
}

# three_clients PROGRAM: run the python PROGRAM as three clients at
# once, each with the URI and its number (0, 1, 2) as arguments
three_clients () {
  local c pids=()
  for c in 0 1 2; do
    /usr/bin/python3 -c "$1" "$uri" "$c" &
    pids+=($!)
  done
  for c in "${pids[@]}"; do
    wait "$c" || die "a client's writes failed"
  done
}

make_members "$T/r1" 2 24M
uris=()
for i in 0 1; do
  log=() logfile=()
  [ "$i" = 0 ] && log=(--filter=log) logfile=(logfile="$T/mlog")
  start_member "r1-$i" "$T/r1/d$i.img" ${log[@]+"${log[@]}"} \
    --filter=delay -- wdelay=20ms ${logfile[@]+"${logfile[@]}"}
  uris+=("$member_uri")
done
serve_raid1 r1 "${uris[@]}"

seen=$(wc -l < "$T/mlog")
/usr/bin/python3 - "$uri" <<'EOF2' || die "sixteen 4K writes failed"
import nbd, sys
h = nbd.NBD()
h.connect_uri(sys.argv[1])
cookies = [h.aio_pwrite(bytes([i + 1]) * 4096, i * 4096) for i in range(16)]
while h.aio_in_flight() > 0:
    h.poll(-1)
for c in cookies:
    h.aio_command_completed(c)
for i in range(16):
    if h.pread(4096, i * 4096) != bytes([i + 1]) * 4096:
        sys.exit(f"4K block {i} does not read back")
EOF2
# The most data writes member 0 had begun and not answered at once.
most=$(tail -n "+$((seen + 1))" "$T/mlog" | /usr/bin/python3 -c '
import re, sys
out = most = 0
for line in sys.stdin:
    if re.search(r" Write id=\d+ offset=0x([0-9a-f]+)", line) and \
       int(re.search(r"offset=0x([0-9a-f]+)", line).group(1), 16) >= 1 << 20:
        out += 1
        most = max(most, out)
    elif "...Write id=" in line and out > 0:
        out -= 1
print(most)')
[ "$most" -gt 1 ] ||
  die "writes into one unit reached member 0 one at a time ($most at once)"
echo "ok: writes into one unit were at member 0 $most at once"

stop_server

make_members "$T/j" 2 24M
uris=()
for i in 0 1; do
  rm -f "$T/j-$i.sock" "$T/j-$i.pid"
  JITTER_FILE=$T/j/d$i.img nbdkit -f -U "$T/j-$i.sock" -P "$T/j-$i.pid" \
    sh "$abs_top_srcdir/client-tests/jittery-member.sh" 2>> "$T/members.log" &
  disown $!                     # no job notice when it is killed
  cleanup_fn "kill -9 $! 2>/dev/null"
  wait_for 10 test -s "$T/j-$i.pid" || die "member server j-$i did not start"
  uris+=("nbd+unix:///?socket=$T/j-$i.sock")
done
serve_raid1 j "${uris[@]}"
three_clients '
import nbd, random, sys
rnd = random.Random(int(sys.argv[2]))
h = nbd.NBD()
h.connect_uri(sys.argv[1])
cookies = []
for _ in range(100):
    n = rnd.randrange(1, 9) * 4096
    off = rnd.randrange(0, (128 << 10) - n + 1, 512)
    while h.aio_in_flight() >= 8:
        h.poll(-1)
    cookies.append(h.aio_pwrite(rnd.randbytes(n), off))
while h.aio_in_flight() > 0:
    h.poll(-1)
for c in cookies:
    h.aio_command_completed(c)
h.flush()'
stop_server
# The data area starts 1 MiB in (md's data offset for members this
# small); the superblocks before it differ by role.
cmp -i 1048576 "$T/j/d0.img" "$T/j/d1.img" ||
  die "the copies differ after overlapping writes"
echo "ok: the copies are equal after three clients' overlapping writes"

# O_DIRECT needs a filesystem that supports it (not tmpfs).
dd if=/dev/zero of="$T/probe" bs=4096 count=1 oflag=direct 2>/dev/null ||
  skip "$T does not support O_DIRECT"
new_array dio 1 - - 2 8M --assume-clean
array_option "direct = true" "bitmap = none"
start_server "$conf"
# Client c writes each 512-byte slot s of the first 256K with s % 3 ==
# c once, in a random order, 16 at a time: the eight slots of a 4K
# block belong to all three clients.
three_clients '
import nbd, random, sys
c = int(sys.argv[2])
h = nbd.NBD()
h.connect_uri(sys.argv[1])
mine = [s for s in range(512) if s % 3 == c]
random.Random(c).shuffle(mine)
cookies = []
for s in mine:
    while h.aio_in_flight() >= 16:
        h.poll(-1)
    cookies.append(h.aio_pwrite(bytes([s % 251 + 1]) * 512, s * 512))
while h.aio_in_flight() > 0:
    h.poll(-1)
for k in cookies:
    h.aio_command_completed(k)
h.flush()'
/usr/bin/python3 -c '
import sys
open(sys.argv[1], "wb").write(b"".join(bytes([s % 251 + 1]) * 512
                                       for s in range(512)))' "$T/slots"
stop_server
for i in 0 1; do
  cmp -n 262144 -i 1048576:0 "$T/dio/d$i.img" "$T/slots" ||
    die "O_DIRECT member $i lost a 512-byte write beside another"
done
echo "ok: O_DIRECT copies hold every 512-byte write of three clients"
