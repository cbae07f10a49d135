#!/usr/bin/python3
"""Set one field of a member's md v1.2 superblock and fix the checksum
(unless --keep-csum), to craft stale, foreign or corrupt members; or,
with --bitmap, a field of its internal bitmap's header (no checksum).

    sb-edit.py MEMBER BYTE-OFFSET FORMAT VALUE [--keep-csum] [--bitmap]

FORMAT is a struct code: B (u8), H (u16), I (u32), i (s32), Q (u64).
Offsets are into the superblock (md's struct mdp_superblock_1 in
include/uapi/linux/raid/md_p.h), e.g. 200 Q = events,
or into the bitmap header, e.g. 52 I = chunksize.
"""
import struct
import sys

SB = 4096
BITMAP = 8192   # v1.2: bitmap_offset 8 sectors after the superblock


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
    bitmap = "--bitmap" in sys.argv
    start = BITMAP if bitmap else SB
    with open(path, "r+b") as f:
        f.seek(start)
        sb = bytearray(f.read(4096))
        struct.pack_into("<" + fmt, sb, int(off), int(value, 0))
        if not bitmap and "--keep-csum" not in sys.argv:
            struct.pack_into("<I", sb, 216, checksum(sb))
        f.seek(start)
        f.write(sb)


main()
