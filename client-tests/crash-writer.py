#!/usr/bin/python3
"""Write until killed, recording only what the server has made durable.

    crash-writer.py write URI LOG SEED MAX [KILL-AFTER PID]
    crash-writer.py verify URI LOG

write: the array is cut into slots of an odd size (so writes straddle
chunks and stripes); in random order, each slot not yet in LOG is
written once with content derived from the seed and its index, several
writes in flight at a time, some with FUA and the rest followed by a
flush.  Only when the FUA reply or the flush reply has come back is the
slot appended to LOG (written and fsync'd): LOG lists exactly the writes
that a crash of the server must not lose.  A slot is never written
twice, so what a crash cuts short cannot touch what LOG lists.  Runs
until it has written MAX slots, the slots run out, or it is killed.
With KILL-AFTER, once that many slots are recorded it sends SIGKILL to
PID (the server) right after issuing the next writes: the crash comes
with writes in flight.

verify: every slot in LOG reads back as written.
"""
import os
import random
import signal
import sys

import nbd

SLOT = 9000


def content(seed, index):
    return random.Random(seed * 1000003 + index).randbytes(SLOT)


def write(uri, log, seed, most, kill_after=None, pid=None):
    h = nbd.NBD()
    h.connect_uri(uri)
    used = set()
    if os.path.exists(log):
        used = {int(line.split()[1]) for line in open(log)}
    slots = [i for i in range(h.get_size() // SLOT) if i not in used]
    rng = random.Random(seed)
    rng.shuffle(slots)
    slots = slots[:most]
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    recorded = 0
    while slots:
        n = rng.randint(1, 6)
        batch, slots = slots[:n], slots[n:]
        fua = rng.random() < 0.3
        cookies = [h.aio_pwrite(content(seed, i), i * SLOT,
                                flags=nbd.CMD_FLAG_FUA if fua else 0)
                   for i in batch]
        if kill_after is not None and recorded >= kill_after:
            h.poll(0)                   # get the requests on the wire
            os.kill(pid, signal.SIGKILL)
            return
        for c in cookies:
            while not h.aio_command_completed(c):
                h.poll(-1)
        if not fua:
            h.flush()
        os.write(fd, "".join("%d %d\n" % (seed, i) for i in batch).encode())
        os.fsync(fd)
        recorded += len(batch)


def verify(uri, log):
    h = nbd.NBD()
    h.connect_uri(uri)
    n = 0
    for line in open(log):
        seed, index = map(int, line.split())
        if h.pread(SLOT, index * SLOT) != content(seed, index):
            sys.exit("slot %d (seed %d) lost after the crash" % (index, seed))
        n += 1
    print("ok: %d flushed writes survived" % n)


if sys.argv[1] == "write":
    write(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]),
          *map(int, sys.argv[6:8]))
else:
    verify(sys.argv[2], sys.argv[3])
