"""What md's write journal costs and what its write-back mode buys:
random 4K writes to a RAID6 with a bitmap, with a journal written
through (data and parity logged and flushed before the members see
them) and written back (a write acknowledged once its data is logged;
the stripes destaged later).  Twice: members on tmpfs, where the
journal's extra writes cost CPU and memory, and members that behave
like disks (the disks section's profile: 2 ms a request, one at a
time), with the journal on tmpfs as on a fast device of its own, where
write-back hides the read-modify-write the members pay."""
import os

import arrays
import cleanup
import command
import fio
import measure
import paths
import servers
from results import Row
from . import disks, shapes

TITLE = "Write journal (RAID6 small writes)"
SECTION = "journal"
MODES = (("bitmap", None), ("journal write-through", "write-through"),
         ("journal write-back", "write-back"))


def run(ctx):
    region = shapes.region(ctx)
    with cleanup.Scope() as scope:
        cases = []
        for name, mode in MODES:
            spec = shapes.spec(ctx, 6, 6, chunk="64K", bitmap=mode is None,
                               journal_mode=mode)
            d = ctx.scratch(scope, f"journal-{name.replace(' ', '-')}")
            array = arrays.Array(scope, d, "a", spec)
            array.start()
            cases.append((f"{spec.label} {name}", array))
        measure.compare(ctx, SECTION, cases, spec, [fio.RAND_WRITE], region)
    on_disks(ctx)
    return (f"tmpfs: over {shapes.mib(region)}, the three arrays in turn "
            "each round, beside btrfs raid6 (the same btrfs every row); "
            f"disk members: 6 of {disks.DISK.label}, the journal a tmpfs "
            "file (128 MiB: an 8 MiB cache), fresh arrays, fio random 4K "
            f"writes at queue depth 32 over {shapes.mib(DISK_REGION)}: a "
            f"burst of {shapes.mib(BURST)}, then {SUSTAINED_S} s "
            "(--quick 4 s) after a second's ramp.")


DISK_REGION = 256 * shapes.MiB
BURST = 4 * shapes.MiB
SUSTAINED_S = 20
BURST_JOB = fio.Job(f"rand write 4K qd32, a {BURST >> 20} MiB burst",
                    "randwrite", "4k", 32)


def burst(uri, out):
    """BURST of fio random 4K writes, not time-based."""
    command.run(["fio", "--ioengine=nbd", f"--uri={uri}",
                 "--output-format=json", f"--output={out}",
                 f"--io_size={BURST}",
                 *fio._args(BURST_JOB, DISK_REGION)])
    return fio._parse(out, BURST_JOB)


def on_disks(ctx):
    """The three arrays over members of the disks profile."""
    runtime = 4 if ctx.quick else SUSTAINED_S
    member_bytes = 128 * shapes.MiB
    for name, mode in MODES:
        spec = arrays.Spec(f"disk RAID6 6 members chunk 64K {name}", 6, 6,
                           member_bytes, "64K", bitmap=mode is None,
                           journal_mode=mode)
        with cleanup.Scope() as scope:
            d = ctx.scratch(scope, f"journal-disk-{mode or 'bitmap'}")
            uris = []
            for i in range(spec.members):
                path = os.path.join(d, f"d{i}.img")
                with open(path, "wb") as f:
                    f.truncate(member_bytes)
                uris.append(servers.start(scope, d, f"member{i}",
                                          disks.DISK.filters(path)).uri)
            journal = os.path.join(d, "j.img")
            with open(journal, "wb") as f:
                f.truncate(arrays.JOURNAL_BYTES)
            conf = os.path.join(d, "a.conf")
            with open(conf, "w") as f:
                f.write(spec.config("a", uris, journal=journal))
            command.run([paths.NBDRAID, "create", "--assume-clean", conf])
            server = servers.raid(scope, conf, "nbdkit")
            out = os.path.join(ctx.root, "fio-journal-disk.json")
            got = {BURST_JOB: burst(server.uri, out),
                   fio.RAND_WRITE: fio.run(fio.RAND_WRITE, server.uri,
                                           DISK_REGION, runtime,
                                           disks.RAMP_S, out)}
        limit = disks._limit(6, 6, fio.RAND_WRITE, disks.DISK.mb_per_s,
                             disks.DISK.iops)
        for job, result in got.items():
            ctx.rows.append(Row(SECTION, spec.label, job.name, "IOPS",
                                "IOPS", result.iops, ceiling=limit,
                                peer_names=disks.PEERS,
                                note="limit: 6 members x 500 IOPS / 6 "
                                "member I/Os a RAID6 small write costs"))
            ctx.rows.append(Row(SECTION, spec.label, job.name,
                                "p99 latency", "us", result.p99_us,
                                peer_names=disks.PEERS,
                                note="a member takes 2 ms a request"))
