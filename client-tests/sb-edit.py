#!/usr/bin/python3
"""Set one field of a member's md v1.2 superblock and fix the checksum
(unless --keep-csum), to craft stale, foreign or corrupt members.

    sb-edit.py MEMBER BYTE-OFFSET FORMAT VALUE [--keep-csum]

FORMAT is a struct code: B (u8), H (u16), I (u32), i (s32), Q (u64).
Offsets are into the superblock (md-format.md), e.g. 200 Q = events.
"""
import struct
import sys

SB = 4096


def checksum(sb):
    max_dev = struct.unpack_from("<I", sb, 220)[0]
    size = 256 + 2 * max_dev
    total = sum(struct.unpack_from("<%dI" % (size // 4), sb, 0))
    total -= struct.unpack_from("<I", sb, 216)[0]
    if size % 4:
        total += struct.unpack_from("<H", sb, size - 2)[0]
    return ((total & 0xffffffff) + (total >> 32)) & 0xffffffff


def main():
    path, off, fmt, value = sys.argv[1:5]
    with open(path, "r+b") as f:
        f.seek(SB)
        sb = bytearray(f.read(4096))
        struct.pack_into("<" + fmt, sb, int(off), int(value, 0))
        if "--keep-csum" not in sys.argv:
            struct.pack_into("<I", sb, 216, checksum(sb))
        f.seek(SB)
        f.write(sb)


main()
