#!/usr/bin/python3
# Hostile NBD clients for test-hostile-clients.sh: requests libnbd will
# not send (an unknown command, reads and writes over nbdkit's 64 MiB
# limit, a write cut off mid-payload, a bad magic), and connection
# floods.  Each check asserts nbdkit's answer and that the connection
# (or the next one) is still served; the shell test then checks the data.
#
#   hostile-nbd.py raw SOCKET PATTERN   PATTERN: what the export holds
#   hostile-nbd.py flood SOCKET PATTERN N SECONDS
#   hostile-nbd.py idle SOCKET PATTERN N
#   hostile-nbd.py hold SOCKET N        the limit filter's limit=N holds

import errno
import os
import socket
import struct
import sys
import threading
import time

REQUEST_MAGIC, REPLY_MAGIC = 0x25609513, 0x67446698
CMD_READ, CMD_WRITE, CMD_DISC = 0, 1, 2
MAX_REQUEST = 64 * 1024 * 1024          # nbdkit's MAX_REQUEST_SIZE


def recvn(s, n):
    b = bytearray()
    while len(b) < n:
        c = s.recv(min(n - len(b), 1 << 20))
        if not c:
            raise EOFError("server closed after %d of %d bytes" % (len(b), n))
        b += c
    return bytes(b)


def connect(path):
    """Fixed newstyle handshake, NBD_OPT_EXPORT_NAME "": simple replies."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(path)
    hello = recvn(s, 18)
    assert hello[:16] == b"NBDMAGICIHAVEOPT", hello
    s.sendall(struct.pack(">I", 3))     # FIXED_NEWSTYLE | NO_ZEROES
    s.sendall(b"IHAVEOPT" + struct.pack(">II", 1, 0))
    size, _flags = struct.unpack(">QH", recvn(s, 10))
    return s, size


def send(s, cmd, offset, count, payload=b"", magic=REQUEST_MAGIC):
    s.sendall(struct.pack(">IHHQQI", magic, 0, cmd, 0x1234, offset, count))
    if payload:
        s.sendall(payload)


def reply(s, datalen=0):
    magic, err, handle = struct.unpack(">IIQ", recvn(s, 16))
    assert magic == REPLY_MAGIC and handle == 0x1234, (hex(magic), handle)
    return err, (recvn(s, datalen) if err == 0 and datalen else b"")


def expect(what, got, want):
    if got != want:
        sys.exit("FAIL: %s: got %s, want %s" % (what, errno.errorcode.get(
            got, got), errno.errorcode.get(want, want)))
    print("ok: %s -> %s" % (what, errno.errorcode.get(got, got)))


def still_serves(s, pattern, what):
    send(s, CMD_READ, 4096, 4096)
    err, data = reply(s, 4096)
    if err or data != pattern[4096:8192]:
        sys.exit("FAIL: after %s the connection no longer reads right" % what)


def gone(s):
    """True if the server closes s within 10 s without answering."""
    s.settimeout(10)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def raw(path, pattern_file):
    pattern = open(pattern_file, "rb").read()
    s, size = connect(path)
    assert size == len(pattern), (size, len(pattern))

    send(s, 99, 0, 512)
    expect("unknown command type 99", reply(s)[0], errno.EINVAL)
    still_serves(s, pattern, "an unknown command")

    send(s, CMD_READ, 0, MAX_REQUEST + 1)
    expect("read of 64 MiB + 1", reply(s)[0], errno.ENOMEM)
    still_serves(s, pattern, "an oversized read")

    # nbdkit reads and discards the payload, then answers.
    n = MAX_REQUEST + 4096
    send(s, CMD_WRITE, 0, n, b"\xee" * n)
    expect("write of 64 MiB + 4 KiB", reply(s)[0], errno.ENOMEM)
    still_serves(s, pattern, "an oversized write")
    s.close()

    # Too large to skip: nbdkit hangs up on that client.
    s, _ = connect(path)
    try:
        send(s, CMD_WRITE, 0, 0xffffffff, b"\xdd" * (1 << 20))
    except (BrokenPipeError, ConnectionResetError):
        pass
    if not gone(s):
        sys.exit("FAIL: a 4 GiB write header did not end the connection")
    print("ok: a 4 GiB write header ends that connection")
    s.close()

    s, _ = connect(path)
    send(s, CMD_READ, 0, 512, magic=0xdeadbeef)
    if not gone(s):
        sys.exit("FAIL: a bad request magic did not end the connection")
    print("ok: a bad request magic ends that connection")
    s.close()

    # A 32 MiB write whose client vanishes after 8 MiB of payload:
    # nothing of it may reach the array.
    s, _ = connect(path)
    send(s, CMD_WRITE, 1 << 20, 32 << 20, b"\xcc" * (8 << 20))
    s.close()
    s, _ = connect(path)
    still_serves(s, pattern, "a write cut off mid-payload")
    send(s, CMD_READ, 1 << 20, 32 << 20)
    err, data = reply(s, 32 << 20)
    if err or data != pattern[1 << 20:33 << 20]:
        sys.exit("FAIL: a write cut off mid-payload changed the data")
    print("ok: a write cut off mid-payload wrote nothing")
    send(s, CMD_DISC, 0, 0)
    s.close()


def flood(path, pattern_file, n, seconds):
    """n libnbd clients at once, each checks a different 4 KiB, rewrites
    it unaligned and reads it back; PATTERN is updated to match."""
    import nbd
    pattern = bytearray(open(pattern_file, "rb").read())
    ok, errors = [], []
    start = threading.Barrier(n, timeout=seconds)

    def client(i):
        try:
            h = nbd.NBD()
            start.wait()
            h.connect_unix(path)
            off = (i * 65536 + 512) % (len(pattern) - 4096)
            if h.pread(4096, off) != pattern[off:off + 4096]:
                raise Exception("client %d read wrong data" % i)
            new = os.urandom(4096)
            h.pwrite(new, off, nbd.CMD_FLAG_FUA)
            pattern[off:off + 4096] = new       # disjoint per client
            if h.pread(4096, off) != new:
                raise Exception("client %d read back wrong data" % i)
            h.shutdown()
            ok.append(i)
        except Exception as e:
            errors.append(str(e))

    threads = [threading.Thread(target=client, args=(i,), daemon=True)
               for i in range(n)]
    deadline = time.monotonic() + seconds
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0, deadline - time.monotonic()))
    if len(ok) != n:
        sys.exit("FAIL: flood: %d of %d clients served in %ds; errors: %s" %
                 (len(ok), n, seconds, sorted(set(errors))[:3]))
    open(pattern_file, "wb").write(pattern)
    print("ok: %d parallel clients all read, wrote and read back right" % n)


def idle(path, pattern_file, n):
    """n connections that never finish the handshake, while one works."""
    import nbd
    pattern = open(pattern_file, "rb").read()
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        socks.append(s)
    h = nbd.NBD()
    h.connect_unix(path)
    if h.pread(65536, 0) != pattern[:65536]:
        sys.exit("FAIL: wrong data with %d idle connections open" % n)
    h.shutdown()
    for s in socks:
        s.close()
    print("ok: served beside %d connections idle in the handshake" % n)


def hold(path, n):
    """With nbdkit's limit filter at n: n clients are served, the next is
    refused, and once one leaves the next is served again.  Connections
    stuck before the handshake do not count (the filter counts opens)."""
    import nbd
    idle = []
    for _ in range(50):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        idle.append(s)
    held = []
    for i in range(n):
        h = nbd.NBD()
        h.connect_unix(path)
        h.pread(512, 0)
        held.append(h)
    h = nbd.NBD()
    try:
        h.connect_unix(path)
        h.pread(512, 0)
        sys.exit("FAIL: connection %d was served past limit=%d" % (n + 1, n))
    except nbd.Error as e:
        print("ok: connection %d refused: %s" % (n + 1, e.string))
    held.pop().shutdown()
    # nbdkit counts the departure once it has closed that connection.
    deadline = time.monotonic() + 10
    while True:
        try:
            h = nbd.NBD()
            h.connect_unix(path)
            h.pread(512, 0)
            break
        except nbd.Error as e:
            if time.monotonic() > deadline:
                sys.exit("FAIL: after one left, still refused: %s" % e.string)
            time.sleep(0.1)
    h.shutdown()
    print("ok: after one left, a new connection is served")
    for h in held:
        h.shutdown()
    for s in idle:
        s.close()
    print("ok: 50 connections idle in the handshake used none of the limit")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "raw":
        raw(*args)
    elif cmd == "flood":
        flood(args[0], args[1], int(args[2]), int(args[3]))
    elif cmd == "idle":
        idle(args[0], args[1], int(args[2]))
    elif cmd == "hold":
        hold(args[0], int(args[1]))
    else:
        sys.exit("unknown check %s" % cmd)
