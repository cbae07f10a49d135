#!/usr/bin/python3
"""Walk md's write journal from its tail, or damage one meta block.

    journal-walk.py list JOURNAL.img
    journal-walk.py damage JOURNAL.img N
    journal-walk.py damage-page JOURNAL.img N

The journal device's superblock (4 KiB in) gives its data offset and
the tail (journal_tail, in recovery_offset); from there each meta block
(md's r5l_meta_block: magic 0x6433c509, version 1, seq, position) is
followed by the pages of its payloads.  list prints "sector seq
payloads" per block while seq and position follow on; damage flips a
byte inside meta block N (0: the tail's) so that its checksum fails,
and prints its sector; damage-page flips one in the first page after
it instead.  An independent reading of the format: no
checksums are checked here.
"""
import struct
import sys

BLOCK = 4096
MAGIC = 0x6433c509


def superblock(f):
    f.seek(4096)
    sb = f.read(1024)
    data_offset, data_size = struct.unpack_from("<QQ", sb, 128)
    tail = struct.unpack_from("<Q", sb, 152)[0]
    return data_offset * 512, data_size * 512 // BLOCK * BLOCK, tail * 512


def walk(f):
    base, ring, pos = superblock(f)
    seq = None
    while True:
        f.seek(base + pos)
        mb = f.read(BLOCK)
        magic, _, version, meta_size, s, position = struct.unpack_from(
            "<IIB3xIQQ", mb, 0)
        if magic != MAGIC or version != 1 or position * 512 != pos or \
           (seq is not None and s != seq):
            return
        off, pages, n = 32, 0, 0
        while off < meta_size:
            kind, _, size = struct.unpack_from("<HHI", mb, off)
            if kind == 2:
                off += 8 + size
            else:
                pages += size // 8
                off += 16 + 4 * (size // 8)
            n += 1
        yield base + pos, pos // 512, s, n
        pos = (pos + (1 + pages) * BLOCK) % ring
        seq = s + 1


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    with open(path, "r+b") as f:
        blocks = list(walk(f))
        if cmd == "list":
            for _, sector, seq, n in blocks:
                print(sector, seq, n)
            return 0
        at, sector, _, _ = blocks[int(sys.argv[3])]
        at += BLOCK + 100 if cmd == "damage-page" else 40
        f.seek(at)
        b = f.read(1)
        f.seek(at)
        f.write(bytes([b[0] ^ 0x55]))
        print(sector)
    return 0


if __name__ == "__main__":
    sys.exit(main())
