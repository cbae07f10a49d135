#!/usr/bin/env bash
# Another user cannot stand in for the server on the control socket.
# A server run by an ordinary user (daemon) puts its control socket in
# a shared directory by default (/tmp/nbdraid-UID, here a sticky 1777
# directory standing in for /tmp); another user (nobody) who created
# that directory first, mode 0777, could move the real socket aside and
# answer nbdraid in its place: fake status, swallowed "fail", injected
# monitor events.  Either the server refuses a socket directory it does
# not own, or nbdraid refuses a socket not served by its own user or
# root; never is the impostor believed.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires_root
requires setpriv
id daemon > /dev/null 2>&1 || skip "no user daemon"
id nobody > /dev/null 2>&1 || skip "no user nobody"
as_daemon=(setpriv --reuid=daemon --regid="$(id -g daemon)" --clear-groups
           env XDG_RUNTIME_DIR="$T/shared")
as_nobody=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups)

chmod 755 "$T"
mkdir -m 1777 "$T/shared"
mkdir "$T/srv"
cp "$PLUGIN" "$NBDRAID" "$T/srv/"
make_members "$T/srv" 2 4M
printf '[array]\nname = hijack\nlevel = 1\n[members]\nmember = %s\nmember = %s\n' \
  "$T/srv/d0.img" "$T/srv/d1.img" > "$T/srv/a.conf"
"$NBDRAID" create --assume-clean "$T/srv/a.conf" 2> "$T/create.log" ||
  die "create: $(cat "$T/create.log")"
chown -R daemon: "$T/srv"
nbdraid=("${as_daemon[@]}" "$T/srv/nbdraid")

# impostor PATH: nobody listens on PATH and answers every request with
# a fake status and an injected monitor event; sets $impostor.
impostor () {
  "${as_nobody[@]}" /usr/bin/python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
s.listen(8)
while True:
    c, _ = s.accept()
    try:
        c.recv(4096)
        c.sendall(b"OK\nimpostor: all is well\n"
                  b"EVENT\tFail\thijack\t/etc/passwd\tinjected\n")
    except OSError:
        pass
    c.close()
' "$1" &
  impostor=$!
  cleanup_fn "kill $impostor 2>/dev/null"
  wait_for 10 test -S "$1" || die "the impostor did not start"
}

# nbdraid itself believes only a server run by root or its own user:
# nobody listening on the configured path (no server running) is
# refused, whatever it answers.
imp=$T/shared/impostor.sock
sed "s|^name = hijack|&\nsocket = $imp|" "$T/srv/a.conf" > "$T/srv/imp.conf"
impostor "$imp"
early=$impostor
if out=$("${nbdraid[@]}" status "$T/srv/imp.conf" 2>&1); then
  die "nbdraid status believed an impostor run by nobody: $out"
fi
case $out in
  *"served by uid $(id -u nobody), neither root nor you"*)
    echo "ok: nbdraid checks its peer: $out" ;;
  *) die "nbdraid status: unexpected refusal: $out" ;;
esac
kill "$early" 2>/dev/null || :

# nobody gets there first.
"${as_nobody[@]}" mkdir -m 777 "$T/shared/nbdraid"
"${as_nobody[@]}" chmod 777 "$T/shared/nbdraid"
sock=$T/shared/nbdraid/hijack.sock

"${as_daemon[@]}" nbdkit -f -U "$T/srv/nbd.sock" -P "$T/srv/nbdkit.pid" \
  "$T/srv/nbdkit-raid-plugin.so" "$T/srv/a.conf" 2> "$T/nbdkit.log" &
server_pid=$!
cleanup_fn "kill $server_pid 2>/dev/null; wait $server_pid 2>/dev/null"
wait_for 10 sh -c "[ -S '$sock' ] || ! kill -0 $server_pid 2>/dev/null" ||
  die "nbdkit neither served nor exited"
if ! kill -0 "$server_pid" 2> /dev/null; then
  grep -q "$T/shared/nbdraid" "$T/nbdkit.log" ||
    die "nbdkit exited without naming the directory: $(cat "$T/nbdkit.log")"
  echo "ok: the server refused a socket directory nobody owns: $(cat "$T/nbdkit.log")"
  exit 0
fi
"${nbdraid[@]}" status "$T/srv/a.conf" > /dev/null ||
  die "the genuine server does not answer"

# nobody moves the real socket aside and answers in its place.
"${as_nobody[@]}" mv "$sock" "$T/shared/nbdraid/real.sock"
impostor "$sock"

for verb in status "fail 0"; do
  # shellcheck disable=SC2086
  if out=$("${nbdraid[@]}" $verb "$T/srv/a.conf" 2>&1); then
    die "nbdraid $verb believed an impostor run by nobody: $out"
  fi
  ! grep -q impostor <<< "$out" ||
    die "nbdraid $verb printed the impostor's answer: $out"
  echo "ok: nbdraid $verb refused the impostor: $out"
done
