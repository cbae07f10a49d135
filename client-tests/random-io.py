#!/usr/bin/python3
"""Drive an NBD export with random reads, writes, zeroes and trims of
random (unaligned, sub-chunk, stripe-spanning) ranges, several in flight
at once, and check every byte against a model kept in memory.

    random-io.py URI OPS SEED [--expect FILE] [--save FILE]
                 [--touch-after N FILE] [--kill-after N PID]

--expect: the export's current contents (else it must read as zeros).
--save: write the final contents there (for comparing member files).
--touch-after: create FILE after N operations (an error filter's
  trigger), with requests still in flight.
--kill-after: SIGKILL process PID after N operations (a member server).
"""
import os
import random
import signal
import sys

import nbd


def main():
    uri, ops, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    args = sys.argv[4:]
    expect = args[args.index("--expect") + 1] if "--expect" in args else None
    save = args[args.index("--save") + 1] if "--save" in args else None
    events = []
    if "--touch-after" in args:
        i = args.index("--touch-after")
        path = args[i + 2]
        events.append((int(args[i + 1]), lambda: open(path, "w").close()))
    for i, arg in enumerate(args):
        if arg == "--kill-after":
            pid = int(args[i + 2])
            events.append((int(args[i + 1]),
                           lambda pid=pid: os.kill(pid, signal.SIGKILL)))

    rng = random.Random(seed)
    h = nbd.NBD()
    h.connect_uri(uri)
    size = h.get_size()
    model = bytearray(open(expect, "rb").read()) if expect else bytearray(size)

    def rand_range():
        # Mostly small and unaligned, sometimes large and stripe-spanning.
        length = rng.choice([1, 7, 512, 4096, 5000, 65536, 200000, 1 << 20])
        length = min(length, size)
        off = rng.randrange(0, size - length + 1)
        if rng.random() < 0.3:
            off -= off % 4096
        return off, length

    done = 0
    while done < ops:
        # A batch of non-overlapping requests issued concurrently.
        batch, taken = [], []
        for _ in range(rng.randint(1, 8)):
            off, length = rand_range()
            if any(off < o + l and o < off + length for o, l in taken):
                continue
            taken.append((off, length))
            kind = rng.choices(["write", "zero", "trim", "read"],
                               [6, 1, 1, 2])[0]
            if kind == "write":
                data = rng.randbytes(length)
                model[off:off + length] = data
                batch.append((kind, off, length,
                              h.aio_pwrite(data, off)))
            elif kind in ("zero", "trim"):
                model[off:off + length] = bytes(length)
                cmd = h.aio_zero if kind == "zero" else h.aio_trim
                batch.append((kind, off, length, cmd(length, off)))
            else:
                buf = nbd.Buffer(length)
                batch.append((kind, off, length, h.aio_pread(buf, off), buf))
        for at, action in list(events):
            if done >= at:          # while this batch is in flight
                action()
                events.remove((at, action))
        for item in batch:
            kind, off, length, cookie = item[:4]
            while not h.aio_command_completed(cookie):
                h.poll(-1)
            if kind == "read":
                got = item[4].to_bytearray()
                # Reads ran concurrently with writes elsewhere only.
                if got != model[off:off + length]:
                    sys.exit("read at %d+%d: wrong data" % (off, length))
        done += len(batch)
        if rng.random() < 0.1:
            h.flush()

    h.flush()
    step = 4 << 20
    for off in range(0, size, step):
        n = min(step, size - off)
        if h.pread(n, off) != model[off:off + n]:
            for i in range(n):
                if h.pread(1, off + i) != model[off + i:off + i + 1]:
                    sys.exit("final read: first wrong byte at %d" % (off + i))
    if save:
        open(save, "wb").write(model)
    h.shutdown()
    print("ok: %d random ops on %d bytes" % (done, size))


main()
