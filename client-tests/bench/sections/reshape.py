"""Reshape throughput: a RAID5 of 4 members, every block written with
distinct data, takes a written spare and is restriped onto 5 (`nbdraid
grow --raid-devices 5`, mdadm's reshape without a backup file); timed
from the grow until `nbdraid wait` returns, with speed-min lifted as
for a rebuild.  Idle once a round, each round on a fresh array and
followed by a rebuild of one of the same 5 members (failed, removed,
a written spare added), its reference: both move every member's
data, the reshape read and rewritten in the new geometry, the rebuild
read from four members and written to the fifth.  Then once under
each client load on a fresh array: the load runs for the whole
reshape (its first second, before the grow, not counted), and its
figure is set against the same fio job on the same array just before
the grow.
A reshape must leave the data as it was: the sha256 of the array's
old extent before the grow must match the one after, and the array
must have grown by a third; a sequential writer's region is left out
of the checksum and read back with fio's verify instead (each block
it writes carries its offset and a crc32c).  Members are 1 GiB as
in the rebuild section (512M with --quick); the chunk is 512K,
mdadm's default."""
import os
import statistics
import sys
import time

import arrays
import checksum
import cleanup
import fio
import measure
from results import Row
from . import shapes

TITLE = "Reshape"
OLD_MEMBERS, NEW_MEMBERS = 4, 5
TIMEOUT_S = 600
LOADS = (fio.Job("rand read 4K qd16", "randread", "4k", 16),
         fio.Job("seq write 1M qd16", "write", "1M", 16, extra=fio.VERIFIED))
PEERS = ("reference", "btrfs")
NO_KERNEL = "no kernel peer: btrfs has no restripe to md's layout"
# What the reference column holds in each kind of row.
BESIDE_REBUILD = ("reference: the rebuild of a member of the same 5, "
                  "idle, in the same round")
BESIDE_IDLE_ARRAY = "reference: the same job on the array before the grow"


def run(ctx):
    # Even --quick's reshape must outlast the client's start (its
    # figures begin a second in, as the grow goes in): 128M members
    # were restriped in 0.3 s.
    spec = shapes.spec(ctx, 5, OLD_MEMBERS,
                       (512 if ctx.quick else 1024) * shapes.MiB,
                       chunk="512K")
    grown = shapes.spec(ctx, 5, NEW_MEMBERS, spec.member_bytes,
                        chunk=spec.chunk)
    rounds = [idle_round(ctx, spec, r) for r in range(ctx.rounds)]
    reshape = statistics.median(r["member"] for r in rounds)
    rebuild = statistics.median(r["rebuild"] for r in rounds)
    ratios = [r["member"] / r["rebuild"] for r in rounds]
    spread = (f"{min(ratios):.2f}-{max(ratios):.2f}" if len(ratios) > 1
              else "")
    case = f"{spec.label} {OLD_MEMBERS} -> {NEW_MEMBERS}"
    rows = [
        Row("reshape", case, "reshape, idle", "array data rate", "MB/s",
            statistics.median(r["array"] for r in rounds),
            note="the old array's bytes restriped per second; " + NO_KERNEL,
            peer_names=PEERS),
        Row("reshape", case, "reshape, idle", "member rate", "MB/s",
            reshape, rebuild, spread=spread,
            note="each old member's data moved per second; "
            + BESIDE_REBUILD, peer_names=PEERS),
        Row("reshape", f"{grown.label} 1 failed", "rebuild, idle",
            "rebuild rate", "MB/s", rebuild,
            note="after each idle reshape, a member of the same 5 "
            "rebuilt onto a spare", peer_names=PEERS)]
    for job in LOADS:
        out = loaded_reshape(ctx, spec, job)
        rows.append(Row("reshape", case, f"reshape, under {job.name}",
                        "member rate", "MB/s", out["member"], rebuild,
                        note=BESIDE_REBUILD, peer_names=PEERS))
        unit = "IOPS" if job.is_random else "MB/s"
        rows.append(Row("reshape", f"{case} during the reshape", job.name,
                        "client rate", unit, out["during"], out["before"],
                        note=BESIDE_IDLE_ARRAY + (
                            "; fio --verify=crc32c headers in its blocks"
                            if job.extra else ""), peer_names=PEERS))
    ctx.rows += rows
    return (f"{spec.label}, every block written first; the member rate "
            f"is the old array's bytes / {OLD_MEMBERS - 1} data members per"
            " second, the rebuild's the bytes written to its spare per "
            f"second.  {ctx.rounds} idle "
            f"round{'s' if ctx.rounds > 1 else ''}, a fresh array "
            "each, then one reshape under each client load "
            f"({', '.join(j.name for j in LOADS)}), the client's rate "
            "during it against the same job on the array just before; "
            "the data's sha256 matched before and after every reshape.")


def idle_round(ctx, spec, r):
    """Round R: {"array": bytes restriped a second / 1e6, "member": the
    same / the old data members, "rebuild": a member's bytes rebuilt a
    second / 1e6}."""
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, f"reshape-idle{r}")
        array, written = prepared(ctx, scope, d, spec)
        before = checksum.sha256(array.uri, 0, written)
        took = reshaped(array)
        check_data(array, 0, written, before, took)
        role = NEW_MEMBERS - 1 - r % NEW_MEMBERS
        gone = array.device(role)
        array.fail(role)
        array.remove(gone)
        os.unlink(gone)
        array.add(spare(d, "rebuild", spec))
        member_bytes = array.status()["member_bytes"]
        rebuild = member_bytes / array.wait_rebuilt(TIMEOUT_S) / 1e6
        print(f"bench: rebuild: {rebuild:.0f} MB/s", file=sys.stderr,
              flush=True)
    return {"array": written / took / 1e6,
            "member": written / (OLD_MEMBERS - 1) / took / 1e6,
            "rebuild": rebuild}


def loaded_reshape(ctx, spec, job):
    """A reshape under JOB: {"member": as idle_round's, "during": the
    job's IOPS or MB/s over the reshape, "before": the same on the
    array before the grow}."""
    region = shapes.region(ctx)
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, "reshape-load")
        array, written = prepared(ctx, scope, d, spec)
        # The writer's region changes under it: checked by fio instead,
        # every block of it written with a checksum first.
        start = region if job.direction == "write" else 0
        if start:
            ctx.prefill(array.uri, region, extra=fio.VERIFIED)
        before = measure.figures(ctx.fio(job, array.uri, region, "reshape"),
                                 job)[0][2]
        digest = checksum.sha256(array.uri, start, written)
        out_json = os.path.join(d, "load.json")
        with open(os.path.join(d, "load.log"), "wb") as logf:
            load = fio.start_background(job, array.uri, region, out_json,
                                        logf, ramp_s=1)
        scope.register(load.kill)       # harmless once stopped
        # The grow goes in as fio's ramp ends, its queue full: fio's
        # clock starts once it has connected, a little after fio
        # does, so the time it counts lies within the reshape.  (A
        # second counted before the grow raised a reader's figure
        # from 0.07 to 0.64 of its rate before.)
        time.sleep(1)
        took = reshaped(array)
        # Stopped before the checksum reads, which are not the
        # reshape's time.
        during = measure.figures(fio.stop_background(load, job, out_json),
                                 job)[0][2]
        if not during:
            raise RuntimeError(f"{array.conf}: fio {job.name} has no figure"
                               f" for the {took:.1f} s reshape (over before"
                               " its ramp?)")
        check_data(array, start, written, digest, took)
        if job.direction == "write":
            fio.verify_read(array.uri, region,
                            os.path.join(d, "verify.json"))
    return {"member": written / (OLD_MEMBERS - 1) / took / 1e6,
            "during": during, "before": before}


def prepared(ctx, scope, d, spec):
    """A served RAID5 of SPEC with a spare added, every block written
    with distinct data, speed-min lifted: (array, bytes written)."""
    array = arrays.Array(scope, d, "a", spec)
    array.start()
    array.add(spare(d, "grow", spec))
    written = array.array_bytes() >> 20 << 20
    ctx.prefill(array.uri, written, extra=fio.DISTINCT)
    # md's speed-min would hold the reshape at 10 MB/s under load.
    array.speed_limit(1000000, 0)
    return array, written


def reshaped(array):
    """Grow ARRAY onto NEW_MEMBERS and wait for the reshape to end;
    check it grew by a third.  Returns the seconds from the grow to
    the end."""
    old_bytes = array.array_bytes()
    t0 = time.monotonic()
    array.grow_raid_devices(NEW_MEMBERS)
    array.wait_rebuilt(TIMEOUT_S)
    took = time.monotonic() - t0
    status = array.status()
    want = old_bytes // (OLD_MEMBERS - 1) * (NEW_MEMBERS - 1)
    if status["members"] != NEW_MEMBERS or status["array_bytes"] != want:
        raise RuntimeError(f"{array.conf}: after the reshape "
                           f"{status['members']} members and "
                           f"{status['array_bytes']} bytes, not "
                           f"{NEW_MEMBERS} and {want}")
    return took


def check_data(array, start, written, digest, took):
    """Bytes START to WRITTEN of ARRAY must still hash to DIGEST."""
    if checksum.sha256(array.uri, start, written) != digest:
        raise RuntimeError(f"{array.conf}: bytes {start}-{written} differ "
                           "after the reshape (sha256)")
    print(f"bench: reshape: {written >> 20} MiB restriped in {took:.2f} s,"
          " sha256 unchanged", file=sys.stderr, flush=True)


def spare(d, name, spec):
    """A member-sized file, every block written, as a disk's blocks
    exist before it is added (rebuild.py says why it matters here)."""
    path = os.path.join(d, f"spare-{name}.img")
    arrays.written(path, spec.member_bytes)
    return path
