"""Nested arrays (issue 9): RAID60 of 4 groups of 6 disks against one
24-disk RAID6 and one 24-disk RAID10 on member files of the same size,
with 12 concurrent readers against 1 on each."""
import arrays
import cleanup
import fio
import measure
from results import Row
from . import readers, shapes

TITLE = "Nested: RAID60 against RAID6 and RAID10"
JOBS = [fio.SEQ_WRITE, fio.SEQ_READ, fio.RAND_WRITE, fio.RAND_READ,
        fio.READERS_12, fio.READERS_1]
QUICK_JOBS = [fio.SEQ_READ]


def run(ctx):
    member_bytes = 128 * shapes.MiB
    region = shapes.region(ctx, 512)
    raid60 = shapes.spec(ctx, 6, 24, member_bytes, "256K", groups=4,
                         group_chunk="64K")
    raid60.label = "RAID60 4x(6x128M chunk 64K) chunk 256K"
    specs = [raid60, shapes.spec(ctx, 6, 24, member_bytes, "64K")]
    if not ctx.quick:
        specs.append(shapes.spec(ctx, 10, 24, member_bytes, "64K"))
    jobs = QUICK_JOBS if ctx.quick else JOBS
    for spec in specs:
        with cleanup.Scope() as scope:
            d = ctx.scratch(scope, spec.label.split()[0].lower())
            array = arrays.Array(scope, d, "a", spec)
            array.start()
            measure.compare(ctx, "nested", [(spec.label, array)], spec,
                            jobs, region)
        if fio.READERS_1 in jobs:
            readers.add_scaling_row(ctx, "nested", spec.label)
    for other in specs[1:]:
        add_ratio_rows(ctx, raid60.label, other.label)
    return (f"24 member files of {shapes.mib(member_bytes)}, over "
            f"{shapes.mib(region)}; the kernel peer of RAID60 is btrfs "
            "raid6 over all 24 (btrfs has no nesting).  The last rows "
            "divide RAID60's nbdraid figures by the others'.")


def add_ratio_rows(ctx, mine, other):
    rows = [r for r in ctx.rows if r.section == "nested"]
    theirs = {(r.job, r.metric): r for r in rows if r.case == other}
    for r in [r for r in rows if r.case == mine]:
        t = theirs.get((r.job, r.metric))
        if t and t.nbdraid:
            ctx.rows.append(Row("nested", f"RAID60 / {other.split()[0]}",
                                r.job, r.metric, "x", r.nbdraid / t.nbdraid))
