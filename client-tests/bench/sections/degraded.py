"""Reads from degraded arrays: RAID5 with one member failed, RAID6 with
two, each beside the same array healthy.  nbdraid's members are failed
with `nbdraid fail` on the running server; btrfs loses the same number
of loop devices and is mounted -o degraded."""
import arrays
import cleanup
import command
import fio
import measure
import peers
from . import shapes

TITLE = "Degraded reads"
JOBS = [fio.SEQ_READ, fio.RAND_READ]


def run(ctx):
    cases = [(6, 2)] if ctx.quick else [(5, 1), (6, 2)]
    region = shapes.region(ctx)
    for level, lost in cases:
        spec = shapes.spec(ctx, level, 6)
        array_bytes, healthy, degraded = nbdraid_figures(ctx, spec, lost,
                                                         region)
        k_healthy, k_degraded = kernel_figures(ctx, spec, lost, region,
                                               array_bytes)
        ceiling = measure.ceiling_jobs(ctx, spec, array_bytes, JOBS, region)
        for job in JOBS:
            measure.add_rows(ctx, "degraded", f"RAID{level} healthy", job,
                             healthy[job], ceiling[job], k_healthy[job])
            measure.add_rows(ctx, "degraded", f"RAID{level} {lost} failed",
                             job, degraded[job], ceiling[job],
                             k_degraded[job])
    return (f"6 members of {shapes.mib(spec.member_bytes)}, chunk "
            f"{spec.chunk}, over {shapes.mib(region)}; the last members "
            "are the ones lost.")


def nbdraid_figures(ctx, spec, lost, region):
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, f"degraded-raid{spec.level}")
        array = arrays.Array(scope, d, "a", spec)
        array.start()
        array_bytes = array.array_bytes()
        healthy = measure.nbdraid_jobs(ctx, array, JOBS, region)
        for role in range(spec.members - lost, spec.members):
            array.fail(role)
        degraded = {job: ctx.fio(job, array.uri, region, "nbdraid")
                    for job in JOBS}
    return array_bytes, healthy, degraded


def kernel_figures(ctx, spec, lost, region, array_bytes):
    if ctx.btrfs_why:
        why = {job: ctx.btrfs_why for job in JOBS}
        return why, why
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, f"degraded-btrfs-{spec.btrfs_profile}")
        try:
            fs = peers.Btrfs(scope, d, spec.btrfs_profile, spec.members,
                             spec.member_bytes, array_bytes)
            ctx.prefill(fs.uri, region)
            healthy = {job: ctx.fio(job, fs.uri, region, "btrfs")
                       for job in JOBS}
            fs.degrade(lost)
            degraded = {job: ctx.fio(job, fs.uri, region, "btrfs")
                        for job in JOBS}
        except (command.CommandFailed, RuntimeError) as e:
            why = dict.fromkeys(JOBS, measure.peer_failed(ctx, "btrfs", e))
            return why, why
    return healthy, degraded
