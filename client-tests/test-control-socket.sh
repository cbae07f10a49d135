#!/usr/bin/env bash
# The control socket is the server user's alone: created 0600, and a
# connection from another user (nobody) is refused, both by the file's
# mode and, should the mode be loosened, by the peer's credentials.
# Malformed and oversized requests get an error, never a crash.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires_root
command -v runuser > /dev/null || skip "runuser missing"

new_array a 1 - - 2 4M --assume-clean
start_server "$conf"
sock=${conf%.conf}.sock
[ "$(stat -c %a "$sock")" = 600 ] || die "socket mode $(stat -c %a "$sock")"
chmod 755 "$T" "$T/a"
cp "$NBDRAID" "$T/nbdraid"

if out=$(runuser -u nobody -- "$T/nbdraid" status --socket "$sock" 2>&1); then
  die "nobody could connect: $out"
fi
grep -q "Permission denied" <<< "$out" || die "unexpected: $out"
echo "ok: the socket's mode keeps nobody out: $out"

chmod 666 "$sock"
if out=$(runuser -u nobody -- "$T/nbdraid" status --socket "$sock" 2>&1); then
  die "nobody was served: $out"
fi
[ "$out" = "nbdraid: permission denied: only root may control array test" ] ||
  die "unexpected: $out"
echo "ok: the peer check keeps nobody out: $out"

# Garbage, an empty line and an oversized request: errors, and the
# server still answers.
/usr/bin/python3 - "$sock" <<'PY'
import socket, sys
def ask(data):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    r = b""
    while True:
        b = s.recv(4096)
        if not b: break
        r += b
    return r.decode(errors="replace")
for req, want in ((b"\x00\x01garbage\n", "ERR malformed request"),
                  (b"frobnicate\n", "ERR unknown command 'frobnicate'"),
                  (b"\n", "ERR empty command"),
                  (b"status" + b"x" * 10000, "ERR command longer than"),
                  (b"fail\t\t\t\n", "ERR unknown command 'fail' or wrong"),
                  (b"status\n", "OK")):
    got = ask(req)
    assert got.startswith(want), (req[:20], got)
print("ok: malformed requests get errors")
PY
"$NBDRAID" status "$conf" > /dev/null || die "the server stopped answering"
stop_server
