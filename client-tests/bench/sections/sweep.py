"""Chunk-size sweep: RAID6 of 16 members, sequential read and write."""
import arrays
import cleanup
import fio
import measure
from . import shapes

TITLE = "Chunk-size sweep"
JOBS = [fio.SEQ_WRITE, fio.SEQ_READ]


def run(ctx):
    chunks = ["64K", "512K"] if ctx.quick else \
        ["32K", "64K", "128K", "256K", "512K", "1024K"]
    region = shapes.region(ctx, 512)
    member_bytes = 128 * shapes.MiB
    with cleanup.Scope() as scope:
        cases = []
        for chunk in chunks:
            spec = shapes.spec(ctx, 6, 16, member_bytes, chunk)
            d = ctx.scratch(scope, f"sweep-{chunk}")
            array = arrays.Array(scope, d, "a", spec)
            array.start()
            cases.append((f"chunk {chunk}", array))
        measure.compare(ctx, "sweep", cases, spec, JOBS, region)
    return (f"RAID6, 16 members of {shapes.mib(member_bytes)}, over "
            f"{shapes.mib(region)}; btrfs has no chunk size: its figures "
            "beside every row are the same btrfs raid6, measured in each "
            "row's rounds; every round takes each chunk in turn, so that the "
            "rows compare figures of the same minutes (plot: sweep.png).")
