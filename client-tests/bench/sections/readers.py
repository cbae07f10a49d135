"""Twelve concurrent sequential readers, each on its own twelfth of the
region, against one reader (both at queue depth 1, so the difference
is concurrency alone)."""
import arrays
import cleanup
import fio
import measure
from results import Row
from . import shapes

TITLE = "Concurrent readers"
JOBS = [fio.READERS_12, fio.READERS_1]


def run(ctx):
    spec = shapes.spec(ctx, 6, 6)
    region = shapes.region(ctx)
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, "readers")
        array = arrays.Array(scope, d, "a", spec)
        array.start()
        measure.compare(ctx, "readers", [(spec.label, array)], spec,
                        JOBS, region)
    add_scaling_row(ctx, "readers", spec.label)
    return (f"{spec.label}, over {shapes.mib(region)}; the last row is "
            "12 readers' MB/s over 1 reader's, for nbdraid and each peer.")


def add_scaling_row(ctx, section, case):
    """12 readers / 1 reader from the two rows just added for CASE."""
    by_job = {r.job: r for r in ctx.rows
              if r.section == section and r.case == case}
    many, one = by_job[fio.READERS_12.name], by_job[fio.READERS_1.name]

    def ratio(a, b):
        return a / b if a and b else None
    ctx.rows.append(Row(section, case, "12 readers / 1 reader", "scaling",
                        "x", ratio(many.nbdraid, one.nbdraid),
                        ratio(many.ceiling, one.ceiling),
                        ratio(many.kernel, one.kernel), many.note))
