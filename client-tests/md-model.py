#!/usr/bin/python3
"""md-model.py: an independent reference model of Linux md's data layout.

Used by nbdraid's client tests to check member files written through the
RAID server against what Linux md would put there.  It is written from the
format facts (md v1.2 superblock, md's RAID0/1/5/6/10 placement), not from
nbdraid's C code, and it favours being obviously right over being fast:
every stripe's placement is built as an explicit list of which disk holds
P, Q and each data index; numpy only does the bulk XOR / GF(2^8) work.

Usage:
  md-model.py image [-o OUT] MEMBER...   write the array's logical contents
                                         (from data chunks only) to OUT or
                                         stdout
  md-model.py check MEMBER...            verify parity / mirrors over the
                                         whole used area of every member
  md-model.py selftest                   check the GF(2^8) arithmetic and
                                         hand-worked placements

Members may be given in any order; each is placed by its role
(dev_roles[dev_number]); spares (role 0xffff) are ignored.

Exit status: 0 success ("consistent" for check); 1 inconsistency found (check)
or self-test failure; 2 usage error, bad superblock or unsupported geometry.
"""

import mmap
import os
import struct
import sys

import numpy as np

SECTOR = 512
SB_OFFSET = 4096            # v1.2: superblock 8 sectors into the member
SB_MAGIC = 0xa92b4efc
ROLE_SPARE = 0xffff

# feature_map bits this model understands (none of them moves data).
FEAT_BITMAP = 0x1
FEAT_RECOVERY_OFFSET = 0x2
FEAT_BAD_BLOCKS = 0x8
FEAT_JOURNAL = 0x200           # the log is on a device of its own
FEAT_PPL = 0x400
FEAT_RAID0_LAYOUT = 0x1000
FEAT_KNOWN = (FEAT_BITMAP | FEAT_RECOVERY_OFFSET | FEAT_BAD_BLOCKS |
              FEAT_JOURNAL | FEAT_PPL | FEAT_RAID0_LAYOUT)

RAID5_LAYOUT_NAMES = {
    0: "left-asymmetric",
    1: "right-asymmetric",
    2: "left-symmetric",
    3: "right-symmetric",
    4: "parity-first",
    5: "parity-last",
}

RAID1_BLOCK = 1 << 20       # RAID1 has no chunks; compare in 1 MiB blocks


class ModelError(Exception):
    """Usage error, bad superblock or unsupported geometry (exit 2)."""


# ---------------------------------------------------------------------------
# GF(2^8), polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11d), generator g = 2.

def gf_mul_naive(a, b):
    """Multiply two field elements bit by bit (schoolbook, then reduce)."""
    product = 0
    for bit in range(8):
        if b & (1 << bit):
            product ^= a << bit
    for bit in range(14, 7, -1):
        if product & (1 << bit):
            product ^= 0x11d << (bit - 8)
    return product


def _make_mul2_table():
    table = []
    for x in range(256):
        y = x << 1
        if y & 0x100:
            y ^= 0x11d
        table.append(y)
    return np.array(table, dtype=np.uint8)


GF_MUL2 = _make_mul2_table()          # the 256-entry multiply-by-2 table


def gf_syndrome(blocks):
    """Q = sum over k of g^k * blocks[k], by Horner's rule.

    blocks[k] is the data chunk with syndrome coefficient g^k.  Horner:
    Q = (...((D[m-1]) * g + D[m-2]) * g + ... ) * g + D[0].
    """
    q = np.array(blocks[-1], dtype=np.uint8, copy=True)
    doubled = np.empty_like(q)
    for k in range(len(blocks) - 2, -1, -1):
        # doubled[j] = GF_MUL2[q[j]]; mode="clip" only skips numpy's
        # defensive copy (uint8 indices are always in range).
        GF_MUL2.take(q, out=doubled, mode="clip")
        np.bitwise_xor(doubled, blocks[k], out=q)
    return q


def xor_blocks(blocks):
    p = np.array(blocks[0], dtype=np.uint8, copy=True)
    for b in blocks[1:]:
        np.bitwise_xor(p, b, out=p)
    return p


# ---------------------------------------------------------------------------
# Placement.  Everything here is in whole chunks: a "row" is a chunk-sized
# slot on a member, counted from that member's data_offset.

class Stripe:
    """One RAID5/6 stripe: which disk holds P, Q and each data index.

    data[i] is the disk of data index i (array chunk s*len(data) + i);
    qcoef[i] is the k such that data index i contributes g^k * D to Q.
    """

    def __init__(self, p, q, data, qcoef=None):
        self.p = p
        self.q = q
        self.data = data
        self.qcoef = qcoef

    def __repr__(self):
        return "Stripe(p=%r, q=%r, data=%r, qcoef=%r)" % (
            self.p, self.q, self.data, self.qcoef)


def raid5_stripe(s, n, layout):
    """md's RAID5 placement for stripe s of an n-disk array."""
    d = n - 1                               # data chunks per stripe
    if layout == 0:                         # left-asymmetric
        p = d - s % n
        data = [i + 1 if i >= p else i for i in range(d)]
    elif layout == 1:                       # right-asymmetric
        p = s % n
        data = [i + 1 if i >= p else i for i in range(d)]
    elif layout == 2:                       # left-symmetric
        p = d - s % n
        data = [(p + 1 + i) % n for i in range(d)]
    elif layout == 3:                       # right-symmetric
        p = s % n
        data = [(p + 1 + i) % n for i in range(d)]
    elif layout == 4:                       # parity-first
        p = 0
        data = [i + 1 for i in range(d)]
    elif layout == 5:                       # parity-last (and RAID4)
        p = d
        data = list(range(d))
    else:
        raise ModelError("unsupported RAID5 layout %d" % layout)
    return Stripe(p, None, data)


def raid6_stripe(s, n, layout):
    """md's RAID6 placement for stripe s of an n-disk array."""
    d = n - 2
    if layout in (0, 1):                    # left/right-asymmetric
        p = (n - 1 - s % n) if layout == 0 else s % n
        if p == n - 1:                      # Q D D D P
            q = 0
            data = [i + 1 for i in range(d)]
        else:                               # D D P Q D
            q = p + 1
            data = [i + 2 if i >= p else i for i in range(d)]
    elif layout in (2, 3):                  # left/right-symmetric
        p = (n - 1 - s % n) if layout == 2 else s % n
        q = (p + 1) % n
        data = [(p + 2 + i) % n for i in range(d)]
    elif layout == 4:                       # parity-first: P Q D D
        p, q = 0, 1
        data = [i + 2 for i in range(d)]
    elif layout == 5:                       # parity-last: D D P Q
        p, q = d, d + 1
        data = list(range(d))
    elif layout in (16, 17, 18, 19, 20):    # the same "-6": RAID5's
        # layout on disks 0..n-2 (rotating over n-1), Q on disk n-1
        r5 = raid5_stripe(s, n - 1, layout - 16)
        p, q, data = r5.p, n - 1, list(r5.data)
    else:
        raise ModelError("unsupported RAID6 layout %d" % layout)
    # Syndrome order: walk the disks in device order starting at the disk
    # after Q (disk 0 when Q is the last disk), skipping P and Q; the j-th
    # data disk met gets coefficient g^j.
    start = 0 if q == n - 1 else q + 1
    order = []
    for j in range(n):
        disk = (start + j) % n
        if disk != p and disk != q:
            order.append(disk)
    qcoef = [order.index(disk) for disk in data]
    return Stripe(p, q, data, qcoef)


def raid0_place(c, n):
    """Single-zone RAID0: array chunk c -> (disk, row)."""
    return c % n, c // n


class Raid10Geometry:
    """md RAID10 geometry (drivers/md/raid10.c: setup_geo + calc_sectors),
    with the default far_set_size = raid_disks."""

    def __init__(self, n, layout, dev_chunks):
        if layout >> 17:
            raise ModelError("unsupported RAID10 layout 0x%x "
                             "(far-set / layout-version bits)" % layout)
        self.n = n
        self.near = layout & 0xff
        self.far = (layout >> 8) & 0xff
        self.offset = bool(layout & (1 << 16))
        self.copies = self.near * self.far
        if self.near < 1 or self.far < 1 or self.copies < 2 \
                or self.copies > n:
            raise ModelError("unsupported RAID10 layout 0x%x on %d disks"
                             % (layout, n))
        # calc_sectors, in chunks.
        self.array_chunks = dev_chunks // self.far * n // self.near
        total = self.array_chunks * self.copies
        self.used_chunks = (total + n - 1) // n      # used chunks per member
        if self.offset:
            self.stride = 1
        else:
            self.stride = self.used_chunks // self.far

    def copies_of(self, c):
        """All copies of array chunk c as a list of (disk, row); the first
        one is the one md reads by default."""
        n = self.n
        first = c * self.near
        row, disk = divmod(first, n)
        if self.offset:
            row *= self.far
        out = []
        for _ in range(self.near):
            d, r = disk, row
            out.append((d, r))
            for _ in range(1, self.far):
                # far_set_size == raid_disks: the next far copy is near
                # disks further on (wrapping), one stride further down.
                d = (d + self.near) % n
                r += self.stride
                out.append((d, r))
            disk += 1
            if disk >= n:                   # near copies wrap to the next row
                disk = 0
                row += 1
        return out


# ---------------------------------------------------------------------------
# Superblock.

def sb_checksum(buf):
    """md v1.x superblock checksum over 256 + 2*max_dev bytes."""
    max_dev = struct.unpack_from("<I", buf, 220)[0]
    size = 256 + 2 * max_dev
    b = bytearray(buf[:size])
    b[216:220] = b"\0\0\0\0"
    total = sum(struct.unpack_from("<%dI" % (size // 4), b))
    if size % 4:
        total += struct.unpack_from("<H", b, size - 2)[0]
    return ((total & 0xffffffff) + (total >> 32)) & 0xffffffff


class Superblock:
    FIELDS = [  # (name, offset, struct format)
        ("magic", 0, "I"), ("major_version", 4, "I"),
        ("feature_map", 8, "I"), ("pad0", 12, "I"),
        ("level", 72, "i"), ("layout", 76, "I"), ("size", 80, "Q"),
        ("chunksize", 88, "I"), ("raid_disks", 92, "I"),
        ("bitmap_offset", 96, "i"), ("new_level", 100, "I"),
        ("reshape_position", 104, "Q"), ("delta_disks", 112, "I"),
        ("data_offset", 128, "Q"), ("data_size", 136, "Q"),
        ("super_offset", 144, "Q"), ("recovery_offset", 152, "Q"),
        ("dev_number", 160, "I"), ("events", 200, "Q"),
        ("resync_offset", 208, "Q"), ("sb_csum", 216, "I"),
        ("max_dev", 220, "I"),
    ]

    def __init__(self, buf, path):
        self.path = path
        for name, off, fmt in self.FIELDS:
            setattr(self, name, struct.unpack_from("<" + fmt, buf, off)[0])
        self.set_uuid = bytes(buf[16:32])
        self.set_name = bytes(buf[32:64]).rstrip(b"\0").decode(
            "utf-8", "replace")
        if self.magic != SB_MAGIC:
            raise ModelError("%s: no md superblock (magic 0x%08x)"
                             % (path, self.magic))
        if self.major_version != 1:
            raise ModelError("%s: superblock major_version %d, expected 1"
                             % (path, self.major_version))
        if self.max_dev > 1920:
            raise ModelError("%s: max_dev %d > 1920" % (path, self.max_dev))
        csum = sb_checksum(buf)
        if csum != self.sb_csum:
            raise ModelError("%s: superblock checksum is 0x%08x, computed "
                             "0x%08x" % (path, self.sb_csum, csum))
        if self.pad0 != 0 or any(buf[224:256]):
            raise ModelError("%s: non-zero superblock padding" % path)
        if self.super_offset != SB_OFFSET // SECTOR:
            raise ModelError("%s: super_offset %d, not a v1.2 superblock "
                             "(expected %d)" % (path, self.super_offset,
                                                SB_OFFSET // SECTOR))
        if self.feature_map & ~FEAT_KNOWN:
            raise ModelError("%s: unsupported feature_map 0x%x "
                             "(reshape, journal or replacement)"
                             % (path, self.feature_map))
        sb_end = SB_OFFSET + 256 + 2 * self.max_dev
        if self.data_offset * SECTOR < sb_end:
            raise ModelError("%s: data_offset %d overlaps the superblock"
                             % (path, self.data_offset))
        if self.dev_number >= self.max_dev:
            raise ModelError("%s: dev_number %d >= max_dev %d"
                             % (path, self.dev_number, self.max_dev))
        self.role = struct.unpack_from("<H", buf, 256 + 2 * self.dev_number)[0]


class Array:
    """The members of one array, placed by role, plus its geometry."""

    def __init__(self, paths):
        if not paths:
            raise ModelError("no members given")
        sbs = []
        for path in paths:
            try:
                with open(path, "rb") as f:
                    f.seek(SB_OFFSET)
                    buf = f.read(4096)
                    fsize = os.fstat(f.fileno()).st_size
            except OSError as e:
                raise ModelError("%s: %s" % (path, e.strerror))
            if len(buf) < 512:
                raise ModelError("%s: too small for an md superblock" % path)
            buf = buf + bytes(4096 - len(buf))
            sb = Superblock(buf, path)
            sb.file_size = fsize
            sbs.append(sb)

        ref = sbs[0]
        for sb in sbs[1:]:
            for name in ("set_uuid", "level", "layout", "size", "chunksize",
                         "raid_disks"):
                if getattr(sb, name) != getattr(ref, name):
                    raise ModelError("%s and %s disagree on %s" % (
                        ref.path, sb.path, name))
            if sb.events != ref.events:
                sys.stderr.write("md-model: warning: %s has events %d, "
                                 "%s has %d\n" % (ref.path, ref.events,
                                                  sb.path, sb.events))
        self.level = ref.level
        self.layout = ref.layout
        self.n = ref.raid_disks
        self.chunk = ref.chunksize * SECTOR        # bytes
        self.size = ref.size * SECTOR              # bytes used per member

        n = self.n
        if n < 1:
            raise ModelError("raid_disks is %d" % n)
        self.members = [None] * n                  # indexed by role
        for sb in sbs:
            if sb.role == ROLE_SPARE:
                continue
            if sb.role >= n:
                raise ModelError("%s: role 0x%x is not a slot of a %d-disk "
                                 "array" % (sb.path, sb.role, n))
            if self.members[sb.role] is not None:
                raise ModelError("%s and %s both claim role %d" % (
                    self.members[sb.role].path, sb.path, sb.role))
            if sb.feature_map & FEAT_RECOVERY_OFFSET:
                sys.stderr.write("md-model: warning: %s is only recovered up "
                                 "to sector %d\n" % (sb.path,
                                                     sb.recovery_offset))
            self.members[sb.role] = sb
        missing = [r for r in range(n) if self.members[r] is None]
        if missing:
            raise ModelError("no member for role(s) %s" %
                             ", ".join(map(str, missing)))

        self._setup_geometry()

        for sb in self.members:
            need = sb.data_offset * SECTOR + self.member_used
            if sb.file_size < need:
                raise ModelError("%s: %d bytes, but the array uses %d" % (
                    sb.path, sb.file_size, need))
        # Plain read-only ndarray views of each whole member file (slicing
        # an np.memmap is several times slower than slicing an ndarray).
        self.maps = []
        for sb in self.members:
            with open(sb.path, "rb") as f:
                m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            self.maps.append(np.frombuffer(m, dtype=np.uint8))

    def _need_chunk(self, power_of_two=True):
        c = self.chunk // SECTOR
        if c <= 0 or (power_of_two and (c < 8 or c & (c - 1))):
            raise ModelError("unsupported chunk size %d sectors for level %d"
                             % (c, self.level))

    def _setup_geometry(self):
        n, level = self.n, self.level
        if level == 0:
            self._need_chunk(power_of_two=False)
            self.dev_chunks = self.size // self.chunk
            self.member_used = self.dev_chunks * self.chunk
            self.array_size = n * self.member_used
            for sb in self.members:
                if sb.data_size // (self.chunk // SECTOR) != self.dev_chunks:
                    sys.stderr.write(
                        "md-model: warning: %s: data_size %d sectors differs "
                        "from size %d; real md RAID0 zones follow data_size\n"
                        % (sb.path, sb.data_size, self.size // SECTOR))
        elif level == 1:
            self.member_used = self.size
            self.array_size = self.size
        elif level in (4, 5, 6):
            parity = 2 if level == 6 else 1
            if n < parity + 1 or (level == 6 and n < 4):
                raise ModelError("RAID%d with %d disks is not supported"
                                 % (level, n))
            if level == 4:
                # md ignores a RAID4's layout word: parity is last.
                self.layout = 5
            if not (self.layout in RAID5_LAYOUT_NAMES or
                    (level == 6 and 16 <= self.layout <= 20)):
                raise ModelError("unsupported RAID%d layout %d (only 0-5, "
                                 "and 16-20 for RAID6)"
                                 % (level, self.layout))
            self._need_chunk()
            # md rounds the per-member size down to whole chunks.
            self.stripes = self.size // self.chunk
            self.member_used = self.stripes * self.chunk
            self.array_size = (n - parity) * self.member_used
        elif level == 10:
            self._need_chunk()
            self.geo = Raid10Geometry(n, self.layout, self.size // self.chunk)
            self.member_used = self.geo.used_chunks * self.chunk
            self.array_size = self.geo.array_chunks * self.chunk
        else:
            raise ModelError("unsupported RAID level %d" % level)

    # -- data access -------------------------------------------------------

    def block(self, disk, start, length):
        """length bytes at byte start of disk's data area (a read-only
        numpy view)."""
        off = self.members[disk].data_offset * SECTOR + start
        return self.maps[disk][off:off + length]

    def chunk_at(self, disk, row):
        return self.block(disk, row * self.chunk, self.chunk)

    def describe(self, disk):
        return "role %d (%s)" % (disk, self.members[disk].path)

    def stripe(self, s):
        if self.level in (4, 5):
            return raid5_stripe(s, self.n, self.layout)
        return raid6_stripe(s, self.n, self.layout)

    # -- image ---------------------------------------------------------------

    def image(self, out):
        n = self.n
        if self.level == 0:
            for c in range(n * self.dev_chunks):
                out.write(self.chunk_at(*raid0_place(c, n)))
        elif self.level == 1:
            for start in range(0, self.size, RAID1_BLOCK):
                out.write(self.block(0, start,
                                     min(RAID1_BLOCK, self.size - start)))
        elif self.level in (4, 5, 6):
            for s in range(self.stripes):
                for disk in self.stripe(s).data:
                    out.write(self.chunk_at(disk, s))
        elif self.level == 10:
            for c in range(self.geo.array_chunks):
                out.write(self.chunk_at(*self.geo.copies_of(c)[0]))

    # -- check ---------------------------------------------------------------

    def check(self):
        """Return None if consistent, else a one-line description of the
        first inconsistency."""
        if self.level == 0:
            return None
        if self.level == 1:
            return self._check_raid1()
        if self.level in (4, 5, 6):
            return self._check_parity()
        return self._check_raid10()

    def _check_raid1(self):
        for b, start in enumerate(range(0, self.size, RAID1_BLOCK)):
            length = min(RAID1_BLOCK, self.size - start)
            ref = self.block(0, start, length)
            for disk in range(1, self.n):
                other = self.block(disk, start, length)
                if not np.array_equal(ref, other):
                    at = start + int(np.flatnonzero(ref != other)[0])
                    return ("block %d: mirror on %s differs from role 0 at "
                            "data byte %d" % (b, self.describe(disk), at))
        return None

    def _check_parity(self):
        for s in range(self.stripes):
            st = self.stripe(s)
            data = [self.chunk_at(disk, s) for disk in st.data]
            bad = []
            p = xor_blocks(data)
            if not np.array_equal(p, self.chunk_at(st.p, s)):
                bad.append(("P", st.p, p))
            if self.level == 6:
                by_k = [None] * len(data)
                for i, k in enumerate(st.qcoef):
                    by_k[k] = data[i]
                q = gf_syndrome(by_k)
                if not np.array_equal(q, self.chunk_at(st.q, s)):
                    bad.append(("Q", st.q, q))
            if bad:
                parts = []
                for name, disk, want in bad:
                    have = self.chunk_at(disk, s)
                    at = int(np.flatnonzero(want != have)[0])
                    parts.append("%s on %s does not match the data at "
                                 "byte %d of the chunk (member data byte %d)"
                                 % (name, self.describe(disk), at,
                                    s * self.chunk + at))
                return "stripe %d: %s" % (s, "; ".join(parts))
        return None

    def _check_raid10(self):
        for c in range(self.geo.array_chunks):
            copies = self.geo.copies_of(c)
            ref = self.chunk_at(*copies[0])
            for j, (disk, row) in enumerate(copies[1:], 1):
                other = self.chunk_at(disk, row)
                if not np.array_equal(ref, other):
                    at = int(np.flatnonzero(ref != other)[0])
                    return ("array chunk %d: copy %d on %s (member chunk %d) "
                            "differs from copy 0 on role %d (member chunk %d) "
                            "at byte %d of the chunk" % (
                                c, j, self.describe(disk), row,
                                copies[0][0], copies[0][1], at))
        return None


# ---------------------------------------------------------------------------
# Self-test.

def selftest():
    failures = []

    def expect(what, got, want):
        if got != want:
            failures.append("%s: got %r, want %r" % (what, got, want))

    # GF(2^8) arithmetic.
    for x in range(256):
        expect("mul2[%d]" % x, int(GF_MUL2[x]), gf_mul_naive(x, 2))
    expect("2^8", gf_mul_naive(0x80, 2), 0x1d)
    powers, x = set(), 1
    for _ in range(255):
        powers.add(x)
        x = gf_mul_naive(x, 2)
    expect("order of g", (len(powers), x), (255, 1))
    for a in (1, 2, 3, 0x53, 0x80, 0xca, 0xff):
        for b in (1, 2, 0x1d, 0x8e, 0xff):
            expect("commutative %d*%d" % (a, b), gf_mul_naive(a, b),
                   gf_mul_naive(b, a))

    rng = np.random.RandomState(1234)
    for m in (1, 2, 3, 5, 14):
        blocks = [rng.randint(0, 256, 64).astype(np.uint8) for _ in range(m)]
        got = gf_syndrome(blocks)
        want = np.zeros(64, dtype=np.uint8)
        for k, blk in enumerate(blocks):
            coef = 1
            for _ in range(k):
                coef = gf_mul_naive(coef, 2)
            want ^= np.array([gf_mul_naive(coef, int(v)) for v in blk],
                             dtype=np.uint8)
        expect("syndrome of %d blocks" % m, got.tolist(), want.tolist())
        expect("xor of %d blocks" % m, xor_blocks(blocks).tolist(),
               np.bitwise_xor.reduce(np.array(blocks), axis=0).tolist())

    # Hand-worked RAID5 placements, 4 disks: (layout, stripe) -> (P, data).
    r5 = {
        (2, 0): (3, [0, 1, 2]), (2, 1): (2, [3, 0, 1]),
        (2, 2): (1, [2, 3, 0]), (2, 3): (0, [1, 2, 3]),
        (2, 4): (3, [0, 1, 2]),
        (0, 0): (3, [0, 1, 2]), (0, 1): (2, [0, 1, 3]),
        (0, 3): (0, [1, 2, 3]),
        (1, 0): (0, [1, 2, 3]), (1, 1): (1, [0, 2, 3]),
        (3, 0): (0, [1, 2, 3]), (3, 1): (1, [2, 3, 0]),
    }
    for (layout, s), want in sorted(r5.items()):
        st = raid5_stripe(s, 4, layout)
        expect("raid5 layout %d stripe %d" % (layout, s), (st.p, st.data),
               want)

    # Hand-worked RAID6 placements, 5 disks: -> (P, Q, data, qcoef).
    r6 = {
        (2, 0): (4, 0, [1, 2, 3], [0, 1, 2]),
        (2, 1): (3, 4, [0, 1, 2], [0, 1, 2]),
        (2, 2): (2, 3, [4, 0, 1], [0, 1, 2]),
        (0, 0): (4, 0, [1, 2, 3], [0, 1, 2]),   # P last -> Q on disk 0
        (0, 1): (3, 4, [0, 1, 2], [0, 1, 2]),
        (0, 2): (2, 3, [0, 1, 4], [1, 2, 0]),   # D D P Q D
        (0, 4): (0, 1, [2, 3, 4], [0, 1, 2]),
        (1, 0): (0, 1, [2, 3, 4], [0, 1, 2]),
        (1, 2): (2, 3, [0, 1, 4], [1, 2, 0]),
        (1, 4): (4, 0, [1, 2, 3], [0, 1, 2]),
        (3, 0): (0, 1, [2, 3, 4], [0, 1, 2]),
        (3, 4): (4, 0, [1, 2, 3], [0, 1, 2]),
        # -6: RAID5 on disks 0-3, Q on disk 4; Q counts from disk 0.
        (16, 1): (2, 4, [0, 1, 3], [0, 1, 2]),
        (17, 1): (1, 4, [0, 2, 3], [0, 1, 2]),
        (18, 0): (3, 4, [0, 1, 2], [0, 1, 2]),
        (18, 1): (2, 4, [3, 0, 1], [2, 0, 1]),
        (19, 1): (1, 4, [2, 3, 0], [1, 2, 0]),
    }
    for (layout, s), want in sorted(r6.items()):
        st = raid6_stripe(s, 5, layout)
        expect("raid6 layout %d stripe %d" % (layout, s),
               (st.p, st.q, st.data, st.qcoef), want)

    # Every stripe uses every disk exactly once.
    for n in range(2, 17):
        for layout in range(4):
            for s in range(2 * n + 1):
                st = raid5_stripe(s, n, layout)
                expect("raid5 n=%d layout %d stripe %d is a permutation"
                       % (n, layout, s), sorted([st.p] + st.data),
                       list(range(n)))
                if n >= 4:
                    st = raid6_stripe(s, n, layout)
                    expect("raid6 n=%d layout %d stripe %d is a permutation"
                           % (n, layout, s),
                           sorted([st.p, st.q] + st.data), list(range(n)))
                    expect("raid6 n=%d layout %d stripe %d coefficients"
                           % (n, layout, s), sorted(st.qcoef),
                           list(range(n - 2)))
                    if layout >= 2:
                        expect("raid6 symmetric k == i", st.qcoef,
                               list(range(n - 2)))
                    st = raid6_stripe(s, n, layout + 16)
                    expect("raid6 n=%d layout %d stripe %d is a permutation"
                           % (n, layout + 16, s),
                           sorted([st.p, st.q] + st.data), list(range(n)))
                    expect("raid6 n=%d layout %d: Q on the last disk"
                           % (n, layout + 16), st.q, n - 1)

    # RAID0.
    expect("raid0 n=3 chunk 5", raid0_place(5, 3), (2, 1))
    expect("raid0 n=4 chunk 4", raid0_place(4, 4), (0, 1))

    # Hand-worked RAID10 placements: (layout, n, dev_chunks, chunk) -> copies.
    r10 = [
        (0x102, 4, 10, 0, [(0, 0), (1, 0)]),
        (0x102, 4, 10, 1, [(2, 0), (3, 0)]),
        (0x102, 4, 10, 2, [(0, 1), (1, 1)]),
        (0x102, 3, 10, 1, [(2, 0), (0, 1)]),    # near copy wraps a row
        (0x102, 3, 10, 2, [(1, 1), (2, 1)]),
        (0x103, 3, 10, 1, [(0, 1), (1, 1), (2, 1)]),
        (0x103, 4, 10, 1, [(3, 0), (0, 1), (1, 1)]),
        (0x201, 4, 10, 0, [(0, 0), (1, 5)]),    # far stride 10/2 = 5 rows
        (0x201, 4, 10, 3, [(3, 0), (0, 5)]),
        (0x201, 4, 10, 5, [(1, 1), (2, 6)]),
        (0x201, 3, 7, 4, [(1, 1), (2, 4)]),     # 7 chunks -> stride 3
        (0x10201, 4, 10, 0, [(0, 0), (1, 1)]),  # offset: next row
        (0x10201, 4, 10, 3, [(3, 0), (0, 1)]),
        (0x10201, 4, 10, 4, [(0, 2), (1, 3)]),
    ]
    for layout, n, dev_chunks, c, want in r10:
        geo = Raid10Geometry(n, layout, dev_chunks)
        expect("raid10 0x%x n=%d chunk %d" % (layout, n, c),
               geo.copies_of(c), want)
    expect("raid10 n2 n=3 size", Raid10Geometry(3, 0x102, 5).array_chunks, 7)
    expect("raid10 f2 n=3 size", Raid10Geometry(3, 0x201, 7).array_chunks, 9)
    expect("raid10 f2 n=4 stride", Raid10Geometry(4, 0x201, 11).stride, 5)
    # No slot holds two copies; copies of a chunk are on distinct disks;
    # everything stays inside the used area.
    for layout in (0x102, 0x103, 0x201, 0x10201):
        for n in range(2, 9):
            if (layout & 0xff) * ((layout >> 8) & 0xff) > n:
                continue
            for dev_chunks in (4, 5, 7, 10):
                geo = Raid10Geometry(n, layout, dev_chunks)
                seen = set()
                ok = True
                for c in range(geo.array_chunks):
                    cp = geo.copies_of(c)
                    if len({d for d, _ in cp}) != len(cp):
                        ok = False
                    for slot in cp:
                        if slot in seen or slot[1] >= geo.used_chunks \
                                or slot[1] >= dev_chunks:
                            ok = False
                        seen.add(slot)
                expect("raid10 0x%x n=%d dev_chunks=%d placement sane"
                       % (layout, n, dev_chunks), ok, True)

    # Superblock checksum and parsing round trip.
    buf = bytearray(4096)
    struct.pack_into("<IIII", buf, 0, SB_MAGIC, 1, 0, 0)
    struct.pack_into("<iIQIIi", buf, 72, 6, 2, 65536, 128, 5, 0)
    struct.pack_into("<QQQ", buf, 128, 2048, 63488, 8)
    struct.pack_into("<I", buf, 160, 3)
    struct.pack_into("<Q", buf, 208, (1 << 64) - 1)
    struct.pack_into("<I", buf, 220, 128)
    for i in range(128):
        struct.pack_into("<H", buf, 256 + 2 * i, i if i < 5 else ROLE_SPARE)
    struct.pack_into("<H", buf, 256 + 6, 1)     # dev 3 has role 1
    words = sum(struct.unpack_from("<128I", buf)) - struct.unpack_from(
        "<I", buf, 216)[0]
    struct.pack_into("<I", buf, 216,
                     ((words & 0xffffffff) + (words >> 32)) & 0xffffffff)
    sb = Superblock(bytes(buf), "selftest")
    expect("superblock fields",
           (sb.level, sb.layout, sb.size, sb.chunksize, sb.raid_disks,
            sb.data_offset, sb.dev_number, sb.role),
           (6, 2, 65536, 128, 5, 2048, 3, 1))
    buf[80] ^= 1
    try:
        Superblock(bytes(buf), "selftest")
        failures.append("corrupted superblock accepted")
    except ModelError:
        pass

    if failures:
        for f in failures:
            print("FAIL: " + f)
        return 1
    print("selftest passed")
    return 0


# ---------------------------------------------------------------------------

USAGE = ("usage: md-model.py image [-o OUT] MEMBER... | "
         "check MEMBER... | selftest")


def main(argv):
    if not argv:
        raise ModelError(USAGE)
    cmd, args = argv[0], argv[1:]
    if cmd in ("-h", "--help", "help"):
        print(__doc__.strip())
        return 0
    if cmd == "selftest":
        if args:
            raise ModelError(USAGE)
        return selftest()
    if cmd == "image":
        out_path = None
        members = []
        i = 0
        while i < len(args):
            a = args[i]
            if a in ("-o", "--output"):
                if i + 1 >= len(args):
                    raise ModelError("image: -o needs a file name")
                out_path = args[i + 1]
                i += 2
            elif a.startswith("-o") and len(a) > 2:
                out_path = a[2:]
                i += 1
            elif a == "--":
                members.extend(args[i + 1:])
                break
            elif a.startswith("-") and a != "-":
                raise ModelError("image: unknown option %s" % a)
            else:
                members.append(a)
                i += 1
        array = Array(members)
        if out_path is None or out_path == "-":
            out = sys.stdout.buffer
            array.image(out)
            out.flush()
        else:
            with open(out_path, "wb") as out:
                array.image(out)
        return 0
    if cmd == "check":
        if any(a.startswith("-") for a in args):
            raise ModelError("check: no options supported")
        array = Array(args)
        problem = array.check()
        if problem is None:
            print("consistent")
            return 0
        print(problem)
        return 1
    raise ModelError("unknown command %r; %s" % (cmd, USAGE))


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except ModelError as e:
        sys.stderr.write("md-model: %s\n" % e)
        sys.exit(2)
    except BrokenPipeError:
        sys.exit(1)
