"""The main table: each RAID level, sequential and random jobs."""
import arrays
import cleanup
import fio
import measure
from . import shapes

TITLE = "RAID levels"
JOBS = [fio.SEQ_WRITE, fio.SEQ_READ, fio.RAND_WRITE, fio.RAND_READ]


def run(ctx):
    levels = [6] if ctx.quick else [0, 1, 5, 6, 10]
    region = shapes.region(ctx)
    for level in levels:
        spec = shapes.spec(ctx, level, 6)
        with cleanup.Scope() as scope:
            d = ctx.scratch(scope, f"raid{level}")
            array = arrays.Array(scope, d, "a", spec)
            array.start()
            measure.compare(ctx, "levels", [(spec.label, array)], spec,
                            JOBS, region)
    return (f"6 members each, jobs over the first {shapes.mib(region)} of "
            "the export; btrfs uses the same profile for data and metadata "
            "(its raid1 keeps two copies, nbdraid's RAID1 six).")
