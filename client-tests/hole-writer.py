#!/usr/bin/python3
"""Write into one chunk of every RAID5 stripe; check the rest never moves.

    hole-writer.py fill URI
    hole-writer.py write URI CHUNK DATA LEDGER SEED
    hole-writer.py verify URI CHUNK DATA LEDGER

Every 4 KiB block of the array holds its own number and a generation,
followed by bytes derived from both.  fill writes generation 0
everywhere.  write rewrites, one at a time and with FUA, random blocks
of the first data chunk of random stripes (CHUNK bytes, DATA data
chunks a stripe), each with the next generation, and appends "block
generation" to LEDGER (fsync'd) once the reply is back: until killed.
verify reads the whole array: a block the writer may write must hold
its ledger's generation or a later one; every other block must still
hold generation 0.  On a degraded RAID5 those others include the
missing member's chunks, rebuilt from parity: a stripe whose data and
parity landed apart (the write hole) shows there.
"""
import os
import random
import struct
import sys

import nbd

BLOCK = 4096


def content(block, gen):
    rest = random.Random(block * 1000003 + gen).randbytes(BLOCK - 16)
    return struct.pack("<QQ", block, gen) + rest


def connect(uri):
    h = nbd.NBD()
    h.connect_uri(uri)
    return h


def fill(uri):
    h = connect(uri)
    blocks = h.get_size() // BLOCK
    step = 256
    for b in range(0, blocks, step):
        n = min(step, blocks - b)
        h.pwrite(b"".join(content(b + i, 0) for i in range(n)), b * BLOCK)
    h.flush()


def writable(block, chunk, data):
    return (block * BLOCK) % (chunk * data) < chunk


def write(uri, chunk, data, ledger, seed):
    h = connect(uri)
    stripes = h.get_size() // (chunk * data)
    rng = random.Random(seed)
    gen = seed * 1000000
    with open(ledger, "a") as log:
        while True:
            block = (rng.randrange(stripes) * chunk * data +
                     rng.randrange(chunk // BLOCK) * BLOCK) // BLOCK
            gen += 1
            h.pwrite(content(block, gen), block * BLOCK, nbd.CMD_FLAG_FUA)
            log.write(f"{block} {gen}\n")
            log.flush()
            os.fsync(log.fileno())


def verify(uri, chunk, data, ledger):
    h = connect(uri)
    want = {}
    if os.path.exists(ledger):
        for line in open(ledger):
            block, gen = map(int, line.split())
            want[block] = max(want.get(block, 0), gen)
    blocks = h.get_size() // BLOCK
    lost = damaged = 0
    for b in range(blocks):
        got = h.pread(BLOCK, b * BLOCK)
        block, gen = struct.unpack_from("<QQ", got)
        sound = block == b and got == content(b, gen)
        if writable(b, chunk, data):
            if not sound or gen < want.get(b, 0):
                lost += 1
        elif not sound or gen != 0:
            damaged += 1
    print(f"lost {lost} damaged {damaged}")
    return 1 if lost or damaged else 0


def main():
    cmd, uri = sys.argv[1], sys.argv[2]
    if cmd == "fill":
        return fill(uri)
    chunk, data, ledger = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    if cmd == "write":
        return write(uri, chunk, data, ledger, int(sys.argv[6]))
    return verify(uri, chunk, data, ledger)


if __name__ == "__main__":
    sys.exit(main())
