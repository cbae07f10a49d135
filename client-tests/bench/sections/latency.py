"""Members across a slow link: RAID1 over two NBD exports, each behind
nbdkit's delay filter (2 ms added to every request, standing in for a
netem-delayed link; this machine's kernel has no netem), with one
connection per member and with four (nbd-connections).  The ceiling
is one file behind the same delay; btrfs has no NBD members, so there
is no kernel peer here.

The remote mirror is the case read balancing is for: RAID1 of a local
file and one NBD member behind the same delay.  Its ceiling is the
local file alone, served by nbdkit file: what the array gives when it
reads only the near copy."""
import os

import cleanup
import command
import fio
import measure
import paths
import servers
from . import shapes

TITLE = "Members across a 2 ms link"
JOBS = [fio.SEQ_READ, fio.SEQ_WRITE, fio.RAND_READ]
DELAY = ["--filter=delay"]
DELAY_PARAMS = ["rdelay=2ms", "wdelay=2ms"]
NO_KERNEL_PEER = "no kernel peer: btrfs has no NBD members"
MIRROR_JOBS = [fio.RAND_READ, fio.RAND_READ_QD1]
MIRROR_NOTE = "ceiling: the local file alone"


def run(ctx):
    spec = shapes.spec(ctx, 1, 2)
    region = shapes.region(ctx, full_mib=128)
    for conns in (1, 4):
        with cleanup.Scope() as scope:
            d = ctx.scratch(scope, f"latency-{conns}")
            mine = nbdraid_jobs(ctx, scope, d, spec, conns, region)
        ceiling = ceiling_jobs(ctx, spec, region)
        for job in JOBS:
            measure.add_rows(ctx, "latency",
                             f"RAID1 2 NBD members, {conns} conn each", job,
                             mine[job], ceiling[job], NO_KERNEL_PEER)
    mine, ceiling = remote_mirror_jobs(ctx, spec, region)
    for job in MIRROR_JOBS:
        measure.add_rows(ctx, "latency",
                         "remote mirror: RAID1 of a local file and a 2 ms "
                         "NBD member", job, mine[job], ceiling[job],
                         NO_KERNEL_PEER, note=MIRROR_NOTE)
    return (f"RAID1 of two {shapes.mib(spec.member_bytes)} NBD members "
            "(nbdkit file behind the delay filter, 2 ms per read and "
            f"write), over {shapes.mib(region)}; ceiling: one file behind "
            "the same delay.  The remote mirror: RAID1 of a local file "
            "and one such NBD member; ceiling: the local file alone.")


def nbdraid_jobs(ctx, scope, d, spec, conns, region):
    disks = []
    for i in range(spec.members):
        path = os.path.join(d, f"d{i}.img")
        with open(path, "wb") as f:
            f.truncate(spec.member_bytes)
        member = servers.start(scope, d, f"member{i}",
                               DELAY + ["file", path] + DELAY_PARAMS)
        disks.append(member.uri)
    conf = os.path.join(d, "a.conf")
    with open(conf, "w") as f:
        f.write(spec.config("far", disks).replace(
            "[members]", f"nbd-connections = {conns}\n[members]", 1))
    command.run([paths.NBDRAID, "create", "--assume-clean", conf])
    server = servers.raid(scope, conf, "nbdkit")
    ctx.prefill(server.uri, region)
    return {job: ctx.fio(job, server.uri, region, "nbdraid") for job in JOBS}


def ceiling_jobs(ctx, spec, region):
    key = ("latency-ceiling", spec.member_bytes, region)
    todo = [j for j in JOBS if (key, j) not in ctx.cache]
    if todo:
        with cleanup.Scope() as scope:
            d = ctx.scratch(scope, "latency-ceiling")
            path = os.path.join(d, "ceiling.img")
            with open(path, "wb") as f:
                f.truncate(spec.member_bytes)
            peer = servers.start(scope, d, "ceiling",
                                 DELAY + ["file", path] + DELAY_PARAMS)
            ctx.prefill(peer.uri, region)
            for job in todo:
                ctx.cache[key, job] = ctx.fio(job, peer.uri, region,
                                              "ceiling")
    return {job: ctx.cache[key, job] for job in JOBS}


def remote_mirror_jobs(ctx, spec, region):
    """The remote mirror's jobs and their ceiling's, the local file
    alone (a file of its own, filled the same way)."""
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, "remote-mirror")
        local, far, alone = (os.path.join(d, f"{n}.img")
                             for n in ("local", "far", "alone"))
        for path in (local, far, alone):
            with open(path, "wb") as f:
                f.truncate(spec.member_bytes)
        member = servers.start(scope, d, "far",
                               DELAY + ["file", far] + DELAY_PARAMS)
        conf = os.path.join(d, "a.conf")
        with open(conf, "w") as f:
            f.write(spec.config("mirror", [local, member.uri]))
        command.run([paths.NBDRAID, "create", "--assume-clean", conf])
        server = servers.raid(scope, conf, "nbdkit")
        peer = servers.file(scope, d, "alone", alone)
        ctx.prefill(server.uri, region)
        ctx.prefill(peer.uri, region)
        mine = {job: ctx.fio(job, server.uri, region, "nbdraid")
                for job in MIRROR_JOBS}
        ceiling = {job: ctx.fio(job, peer.uri, region, "ceiling")
                   for job in MIRROR_JOBS}
    return mine, ceiling
