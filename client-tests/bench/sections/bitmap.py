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
    for bitmap in (True, False):
        spec = shapes.spec(ctx, 6, 6, bitmap=bitmap)
        case = f"{spec.label} bitmap {'on' if bitmap else 'off'}"
        with cleanup.Scope() as scope:
            d = ctx.scratch(scope, f"bitmap-{'on' if bitmap else 'off'}")
            array = arrays.Array(scope, d, "a", spec)
            array.start()
            measure.compare(ctx, "bitmap", case, spec, array, JOBS, region)
    return (f"over {shapes.mib(region)}; the bitmap is mdadm's default "
            "chunk; btrfs has no bitmap: its figures beside both rows are "
            "the same btrfs raid6, measured in each row's rounds.")
