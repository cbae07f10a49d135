"""Array shapes and region sizes shared by the sections, full and
--quick.  Members are sparse files: only the region fio touches takes
memory.  btrfs refuses devices much under 128 MiB, so --quick keeps
members at 128 MiB and shrinks only the regions."""
import arrays

MiB = 1 << 20


def mib(n_bytes):
    return f"{n_bytes // MiB}M"


def spec(ctx, level, members, member_bytes=None, chunk="128K", **kw):
    member_bytes = member_bytes or (128 * MiB if ctx.quick else 320 * MiB)
    label = f"RAID{level} {members}x{mib(member_bytes)}"
    if level != 1:
        label += f" chunk {chunk}"
    return arrays.Spec(label, level, members, member_bytes, chunk, **kw)


def region(ctx, full_mib=256):
    """Bytes of the export the jobs run over (fits every 6-member level
    of the default member size, RAID1 included)."""
    return (32 if ctx.quick else full_mib) * MiB
