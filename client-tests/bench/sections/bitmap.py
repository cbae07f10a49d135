"""The write-intent bitmap's cost: RAID6 writes with the bitmap on
(the default) and off (bitmap = none)."""
import arrays
import cleanup
import fio
import measure
from . import shapes

TITLE = "Write-intent bitmap"
JOBS = [fio.SEQ_WRITE, fio.RAND_WRITE]


def run(ctx):
    region = shapes.region(ctx)
    with cleanup.Scope() as scope:
        cases = []
        for bitmap in (True, False):
            spec = shapes.spec(ctx, 6, 6, bitmap=bitmap)
            on = "on" if bitmap else "off"
            d = ctx.scratch(scope, f"bitmap-{on}")
            array = arrays.Array(scope, d, "a", spec)
            array.start()
            cases.append((f"{spec.label} bitmap {on}", array))
        measure.compare(ctx, "bitmap", cases, spec, JOBS, region)
    return (f"over {shapes.mib(region)}; the bitmap is mdadm's default "
            "chunk; btrfs has no bitmap: its figures beside both rows are "
            "the same btrfs raid6; every round takes both arrays in turn.")
