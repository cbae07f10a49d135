"""Peak memory: the server's VmHWM after the benchmark's jobs on a
16-member RAID6 with 1 MiB chunks (the largest stripe buffers the
benchmark uses), beside nbdkit file's under the same jobs."""

import arrays
import cleanup
import command
import fio
import measure
import peers
from results import Row
from . import shapes

TITLE = "Peak server memory"
JOBS = [fio.SEQ_WRITE, fio.RAND_WRITE, fio.SEQ_READ, fio.READERS_12]
QUICK_JOBS = [fio.SEQ_WRITE, fio.SEQ_READ]


def run(ctx):
    spec = shapes.spec(ctx, 6, 16, 128 * shapes.MiB, "1024K")
    region = shapes.region(ctx, 512)
    jobs = QUICK_JOBS if ctx.quick else JOBS
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, "rss")
        array = arrays.Array(scope, d, "a", spec)
        server = array.start()
        array_bytes = array.array_bytes()
        mine = peak_rss(ctx, server, region, jobs)
    ceiling = peer_rss(ctx, "ceiling", region, jobs,
                       lambda s, d: peers.Ceiling(s, d, array_bytes))
    kernel = ctx.btrfs_why or peer_rss(
        ctx, "btrfs", region, jobs, lambda s, d: peers.Btrfs(
            s, d, spec.btrfs_profile, spec.members, spec.member_bytes,
            array_bytes))
    notes = [x for x in (ceiling, kernel) if isinstance(x, str)]
    ctx.rows.append(Row("rss", spec.label, "after " + ", ".join(
        j.name for j in jobs), "peak RSS (VmHWM)", "KiB", mine,
        _num(ceiling), _num(kernel), "; ".join(notes)))
    return (f"{spec.label}, jobs over {shapes.mib(region)}; lower is "
            "better, so a ratio above 1 is memory nbdraid needs beyond "
            "nbdkit's own.")


def _num(x):
    return None if isinstance(x, str) else x


def peak_rss(ctx, server, region, jobs):
    ctx.prefill(server.uri, region)
    for job in jobs:
        ctx.fio(job, server.uri, region, "rss")
    return server.peak_rss_kib()


def peer_rss(ctx, name, region, jobs, make_peer):
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, f"rss-{name}")
        try:
            return peak_rss(ctx, make_peer(scope, d).server, region, jobs)
        except (command.CommandFailed, RuntimeError) as e:
            return measure.peer_failed(ctx, name, e)
