#!/usr/bin/env bash
# Another user (nobody) cannot steer the array: the control socket is
# created 0600 even under umask 000, and with its mode loosened to 0666
# the server still refuses nobody by SO_PEERCRED, so that neither
# nbdraid (runuser, setpriv) nor a raw client can fail a member, nor
# subscribe to events.  Root keeps control throughout.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires_root
requires runuser
requires setpriv
id nobody > /dev/null 2>&1 || skip "no user nobody"

new_array a 6 left-symmetric 64K 4 4M --assume-clean
old_umask=$(umask)
umask 000                       # the server must not rely on the umask
start_server "$conf"
umask "$old_umask"
sock=${conf%.conf}.sock
[ "$(stat -c %a "$sock")" = 600 ] ||
  die "socket created mode $(stat -c %a "$sock") under umask 000"
echo "ok: socket created 0600 under umask 000"

chmod 755 "$T" "$T/a"           # let nobody reach the socket's directory
cp "$NBDRAID" "$T/nbdraid"
as_nobody=(runuser -u nobody --)

# The file mode alone keeps nobody out.
if out=$("${as_nobody[@]}" "$T/nbdraid" status --socket "$sock" 2>&1); then
  die "nobody could connect to the 0600 socket: $out"
fi
grep -q "Permission denied" <<< "$out" || die "unexpected: $out"
echo "ok: 0600 refuses nobody: $out"

# With the mode loosened, the server's peer check does.
chmod 666 "$sock"
refusal="nbdraid: permission denied: only root may control array test"
for run in runuser setpriv; do
  if [ "$run" = runuser ]; then
    cmd=("${as_nobody[@]}")
  else
    cmd=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups)
  fi
  for verb in status "fail 0" monitor; do
    # shellcheck disable=SC2086
    if out=$(timeout 10 "${cmd[@]}" "$T/nbdraid" $verb --socket "$sock" 2>&1)
    then
      die "$run: nobody was served '$verb': $out"
    fi
    [ "$out" = "$refusal" ] || die "$run: '$verb': unexpected: $out"
  done
done
echo "ok: mode 0666, nbdraid as nobody (runuser, setpriv) refused: $out"

# The refusal is the server's, not the client's: speak the protocol
# directly as nobody and ask to fail a member and to monitor.  The
# server answers and closes at once, so a request may meet a closed
# socket; the answer is there to read all the same.
"${as_nobody[@]}" /usr/bin/python3 - "$sock" "$T/a/d0.img" <<'PY'
import socket, sys
def ask(line):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(sys.argv[1])
    try:
        s.sendall(line)
    except BrokenPipeError:     # refused and closed at once: still read
        pass
    r = b""
    while True:
        # A request that arrives after the server answered and closed
        # resets the connection; the answer is still read first.
        try:
            b = s.recv(4096)
        except ConnectionResetError:
            break
        if not b:
            break
        r += b
    return r.decode()
for req in (b"fail\t0\n", b"fail\t" + sys.argv[2].encode() + b"\n",
            b"monitor\n", b"status\t--json\n"):
    got = ask(req)
    assert got.startswith("ERR permission denied:"), (req, got)
print("ok: raw requests from nobody refused by the server")
PY

# Root still controls it, and nobody changed nothing.
status_is 'j["working"] == 4 and not j["failed"]' ||
  die "nobody changed the array: $(status_json 2>&1)"
"$NBDRAID" fail "$conf" 0 > /dev/null || die "root could not fail a member"
status_is 'j["working"] == 3 and j["devices"][0]["state"] == "faulty"' ||
  die "root's fail did nothing: $(status_json 2>&1)"
echo "ok: root is served: status, and fail 0"
stop_server
