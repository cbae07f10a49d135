#!/usr/bin/env bash
# Hostile control-socket clients: a 1 MiB line, NUL bytes, binary junk,
# too many words, a partial line left hanging, a silent connection, a
# request dripped byte by byte.  Each gets one ERR line (or, hanging,
# nothing) within a bounded time, never a crash or a stuck server: the
# server answers status all along and keeps serving after.
. "$(dirname "$0")/lib.sh"
requires nbdkit

new_array h 5 left-symmetric 64K 3 8M --assume-clean
start_server "$conf"
ctl=${conf%.conf}.sock

/usr/bin/python3 - "$ctl" <<'PY'
import os, random, socket, sys, threading, time

path = sys.argv[1]

def connect():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)           # connected and answered within this
    for i in range(100):
        try:
            s.connect(path)
            return s
        except BlockingIOError:
            time.sleep(0.05)   # the listen backlog is full: retry
    raise TimeoutError("cannot connect")

def answer(s):
    r = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            r += b
    except ConnectionResetError:
        pass                   # the server closed with our junk unread
    s.close()
    return r.decode(errors="replace")

def ask(data, drip=False):
    s = connect()
    def send():
        try:
            if drip:
                for i in range(len(data)):
                    s.send(data[i:i + 1])
                    time.sleep(0.01)
            else:
                s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass               # refused half-way: the answer says why
    t = threading.Thread(target=send)
    t.start()
    got = answer(s)
    t.join()
    return got

def status_ok():
    got = ask(b"status\n")
    assert got.startswith("OK\n"), got

junk = random.Random(1)
cases = [
    ("1 MiB line", b"status" + b"A" * (1 << 20) + b"\n",
     "ERR command longer than 4096 bytes"),
    ("1 MiB without a newline", b"x" * (1 << 20),
     "ERR command longer than 4096 bytes"),
    ("NUL in the verb", b"sta\x00tus\n", "ERR malformed request (a NUL byte)"),
    ("NUL in an argument", b"fail\t/x\x00y\n", "ERR malformed request"),
    ("binary junk", bytes(junk.randrange(1, 256) for _ in range(3000))
     .replace(b"\n", b"") .replace(b"\t", b"") + b"\n", "ERR unknown command"),
    ("many words", b"status" + b"\tx" * 2000 + b"\n",
     "ERR more than 8 words in the request"),
    ("9 words", b"fail" + b"\ta" * 8 + b"\n", "ERR more than 8 words"),
    ("only tabs", b"\t\t\t\t\n", "ERR empty command"),
    ("--array without a name", b"status\t--array\n",
     "ERR --array needs a NAME"),
    ("no such nested array", b"status\t--array\tnope\n",
     "ERR no array named nope here"),
    ("CR LF", b"status\r\n", "ERR unknown command 'status\r'"),
    ("invalid UTF-8 path", b"fail\t\xff\xfe\xfd\n", "ERR "),
    ("a huge speed-limit", b"speed-limit\t1e308\t1e309\n", "ERR speed-limit"),
    ("negative speed-limit", b"speed-limit\t-1\t5\n", "ERR speed-limit"),
    ("NaN speed-limit", b"speed-limit\tnan\tnan\n", "ERR speed-limit"),
    ("infinite speed-limit", b"speed-limit\t1\tinf\n", "ERR speed-limit"),
    ("dripped, byte by byte", b"frobnicate\n", "ERR unknown command",),
]
for name, data, want in cases:
    t0 = time.time()
    got = ask(data, drip=name.startswith("dripped"))
    assert got.startswith(want) and got.count("\n") == 1, (name, got[:200])
    status_ok()
    print("ok: %s: %s (%.1f s)" % (name, got.strip()[:70], time.time() - t0))

# A client that sends half a line and waits, and one that sends nothing:
# neither holds up anyone else.
hanging = connect()
hanging.sendall(b"stat")
silent = connect()
for i in range(20):
    status_ok()
# Many of them at once.
idle = [connect() for i in range(100)]
for s in idle:
    s.sendall(b"x")
status_ok()
for s in idle + [hanging, silent]:
    s.close()
status_ok()
print("ok: hanging, silent and 100 idle clients hold up no one")
PY
kill -0 "$server_pid" || die "the server died"
"$NBDRAID" status "$conf" > /dev/null || die "the server stopped answering"
nbdinfo --size "$uri" > /dev/null || die "the server stopped serving NBD"
stop_server
echo "ok: the server survived and serves"
