#!/usr/bin/env bash
# One failure too many: RAID5 losing a second member, RAID1 losing its
# last copy.  Every read and write then fails with EIO (never wrong or
# guessed bytes), the log says why, and the superblocks of the members
# still there record what happened.  The write goes first: the array
# learns of a loss from a request that reaches the lost members, and a
# read that read-ahead windows (filled by the nbdcopy before the loss)
# answer does not.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh

expect_eio () {
  nbdsh -u "$uri" -c '
for what, op in (("write", lambda: h.pwrite(b"x" * 4096, 8192)),
                 ("read", lambda: h.pread(65536, 0)),
                 ("read of the end", lambda: h.pread(4096, h.get_size() - 4096))):
    try:
        op()
        raise SystemExit(what + " succeeded")
    except nbd.Error as e:
        assert e.errno == "EIO", (what, e)
' || die "$1: requests did not fail with EIO"
}

nbd_array r5 5 left-symmetric 16K 4 4M
start_server "$conf"
random_file "$T/r5.data" "$(export_size)"
nbdcopy "$T/r5.data" "$uri"
kill_member r5-0
nbdcopy "$uri" "$T/out"
cmp "$T/r5.data" "$T/out" || die "r5: wrong data with one member gone"
kill_member r5-3
expect_eio r5
grep -q "lost more members than it tolerates" "$T/nbdkit.log" ||
  { cp "$T/nbdkit.log" /tmp/bt.log; die "r5: the failure is not logged"; }
stop_server
for i in 1 2; do
  state=$("$NBDRAID" examine --json "$T/r5/d$i.img" |
          sed -n 's/.*"array_state": "\([^"]*\)".*/\1/p')
  [ "$state" = ".AA." ] || die "r5: d$i records $state, not .AA."
done
echo "ok: RAID5 fails with EIO after two member losses"

nbd_array r1 1 - - 2 4M
start_server "$conf"
kill_member r1-0
kill_member r1-1
expect_eio r1
stop_server
echo "ok: RAID1 fails with EIO after losing both copies"
