"""Rebuild throughput: a RAID6 loses a member and a spare is added;
timed from `nbdraid add` until `nbdraid wait` returns (every role
then working).  Once idle, once under a random-read client, both with
half the array written (the rest are holes on every member, which the
rebuild zeroes on the spare instead of reading), and once more idle
with every block written; then a check (md's scrub) of the written
array, timed from `nbdraid check` until `nbdraid wait` returns; and
the initial resync of a new array over members full of written blocks,
held back by its config's speed-max until the server runs, timed from
lifting that limit until `nbdraid wait` returns.  The idle rebuild
runs once a round, between two runs of fio writing a member file, so
that its ratio compares the same minutes (this VM's speed swings
threefold within a minute); each round fails another role, and the
device that left is removed and deleted.
speed-min is lifted for both: md's throttle would otherwise hold the
rebuild at 10 MB/s under load, and for the first second after the
prefill too, hiding what the engine can do.  Ceiling: fio writing one
member file directly, the median of its runs beside the idle rebuilds
(for the check and the resync, reading one).
Spares and the ceiling's file are written once before they are timed,
as a disk's blocks exist before a rebuild: on a VM that hands freed
memory back to its host, the first touch of a tmpfs page costs a host
page fault, which made both figures swing 5x from run to run.  Members
are 1 GiB, so a rebuild takes long enough to time.  Kernel:
`btrfs replace` of a lost device, idle only, its rate counted over the
bytes btrfs had allocated on it (btrfs copies only those; nbdraid
rebuilds the whole member)."""
import os
import statistics
import time

import arrays
import cleanup
import command
import fio
import measure
import peers
from results import Row
from . import shapes

# The rebuild rows' peers: their ceiling is not nbdkit's file plugin.
PEERS = ("fio on a member file", "btrfs replace")

TITLE = "Rebuild"
LOAD = fio.RAND_READ
TIMEOUT_S = 600
# Found while writing this: on Linux 6.18, `btrfs replace` of a missing
# raid6 device under concurrent reads deadlocked for good (the replace
# in btrfs_rm_dev_replace_blocked, the readers in
# btrfs_bio_counter_inc_blocked), leaving an unkillable mount behind.
NO_KERNEL_UNDER_LOAD = ("btrfs replace is not run under load: it "
                        "deadlocked Linux 6.18 (btrfs_rm_dev_replace_blocked)")


def run(ctx):
    spec = shapes.spec(ctx, 6, 6, None if ctx.quick else 1024 * shapes.MiB)
    mine = nbdraid_rebuilds(ctx, spec)
    resync = nbdraid_resync(ctx, spec)
    kernel = kernel_rebuild(ctx, spec, mine["array_bytes"] // 2)
    ceiling = mine["member_write"]
    read_ceiling = member_file(ctx, spec, fio.read_file)
    case = f"{spec.label} 1 failed"
    ctx.rows.append(Row("rebuild", case, "rebuild, idle", "rebuild rate",
                        "MB/s", mine["idle"], ceiling,
                        None if isinstance(kernel, str) else kernel,
                        note=kernel if isinstance(kernel, str) else "",
                        spread=mine["idle_spread"], peer_names=PEERS))
    ctx.rows.append(Row("rebuild", case, "rebuild, idle, all written",
                        "rebuild rate", "MB/s", mine["full"], ceiling,
                        note="every block of the array written first",
                        peer_names=PEERS))
    ctx.rows.append(Row("rebuild", case, "rebuild, under client load",
                        "rebuild rate", "MB/s", mine["loaded"], ceiling,
                        note=NO_KERNEL_UNDER_LOAD, peer_names=PEERS))
    ctx.rows.append(Row("rebuild", spec.label, "check, idle, all written",
                        "check rate", "MB/s", mine["check"], read_ceiling,
                        note="no kernel peer: btrfs scrub is not run",
                        peer_names=PEERS))
    ctx.rows.append(Row("rebuild", spec.label, "initial resync, idle",
                        "resync rate", "MB/s", resync, read_ceiling,
                        note="no kernel peer: btrfs has no resync",
                        peer_names=PEERS))
    measure.add_rows(ctx, "rebuild", f"{spec.label} during rebuild", LOAD,
                     mine["client"], "no peer for the client under rebuild",
                     NO_KERNEL_UNDER_LOAD)
    return (f"{spec.label}, half the array written first (all of it for "
            "the all-written row); rebuild rate = "
            "member bytes rebuilt per second; the ceiling is fio writing "
            "one member file directly, the median of its runs before and "
            f"after each of the {ctx.rounds} idle rebuilds (check rate: "
            "bytes of each member checked or resynced per second, against "
            "fio reading one member file).  "
            "The last rows are the client load "
            f"({LOAD.name}) measured while the rebuild ran.")


def nbdraid_rebuilds(ctx, spec):
    out = {}
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, "rebuild")
        array = arrays.Array(scope, d, "a", spec)
        array.start()
        out["array_bytes"] = array.array_bytes()
        member_file = os.path.join(d, "m.img")
        prefill_beside(ctx, array.uri, out["array_bytes"] // 2 >> 20 << 20,
                       member_file, spec.member_bytes)
        member_bytes = array.status()["member_bytes"]
        array.speed_limit(1000000, 0)
        out.update(idle_rebuilds(ctx, array, d, spec, member_bytes,
                                 member_file))
        array.fail(spec.members - 2)
        load, load_json = start_load(ctx, scope, d, array.uri)
        array.add(spare(d, "loaded", spec))
        out["loaded"] = member_bytes / array.wait_rebuilt(TIMEOUT_S) / 1e6
        out["client"] = fio.stop_background(load, LOAD, load_json)
        ctx.prefill(array.uri, out["array_bytes"] >> 20 << 20)
        array.fail(spec.members - 3)
        array.add(spare(d, "full", spec))
        out["full"] = member_bytes / array.wait_rebuilt(TIMEOUT_S) / 1e6
        array.check()
        out["check"] = member_bytes / array.wait_rebuilt(TIMEOUT_S) / 1e6
        if array.status()["mismatches"]:
            raise RuntimeError(f"{array.conf}: check found mismatches after "
                               "the rebuilds")
    return out


def nbdraid_resync(ctx, spec):
    """MB/s of each member of a new array's initial resync."""
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, "resync")
        array = arrays.Array(scope, d, "r", spec, resync=True)
        array.start()
        array.speed_limit(1000000, 0)
        took = array.wait_rebuilt(TIMEOUT_S)
        status = array.status()
        if not status["synced"]:
            raise RuntimeError(f"{array.conf}: not in sync after its "
                               "initial resync")
        return status["member_bytes"] / took / 1e6


def prefill_beside(ctx, uri, fill_bytes, path, size, slices=64):
    """Prefill FILL_BYTES of URI and write the file PATH of SIZE bytes
    (zeros) a slice of each in turn, so that the members the rebuild
    reads and the member file fio writes lie on the same mix of this
    VM's memory, which is not all equally fast (see measure.py)."""
    step = fill_bytes // slices >> 20 << 20
    piece = size // slices
    with open(path, "wb") as f:
        for i in range(slices):
            offset = i * step
            ctx.prefill(uri, fill_bytes - offset if i == slices - 1 else step,
                        offset)
            f.write(bytes(size - f.tell() if i == slices - 1 else piece))


def idle_rebuilds(ctx, array, d, spec, member_bytes, path):
    """ctx.rounds idle rebuilds, each between two runs of fio writing
    the member file PATH: {"idle": rebuild MB/s, "member_write": fio's
    MB/s, each the median of its runs, "idle_spread": the range of the
    rounds' ratios}.  Round r fails role r from the last: the device
    that left is removed and deleted, so the array's files stay as
    many as its roles."""
    fio_json = os.path.join(d, "member-write.json")
    writes = [fio.write_file(path, spec.member_bytes, fio_json).mb_per_s]
    rebuilds, ratios = [], []
    for r in range(ctx.rounds):
        role = spec.members - 1 - r % spec.members
        gone = array.device(role)
        array.fail(role)
        array.remove(gone)
        os.unlink(gone)
        array.add(spare(d, f"idle{r}", spec))
        rebuilds.append(member_bytes / array.wait_rebuilt(TIMEOUT_S) / 1e6)
        writes.append(fio.write_file(path, spec.member_bytes,
                                     fio_json).mb_per_s)
        ratios.append(rebuilds[-1] / statistics.mean(writes[-2:]))
    spread = (f"{min(ratios):.2f}-{max(ratios):.2f}" if len(ratios) > 1
              else "")
    return {"idle": statistics.median(rebuilds),
            "member_write": statistics.median(writes), "idle_spread": spread}


def spare(d, name, spec):
    path = os.path.join(d, f"spare-{name}.img")
    arrays.written(path, spec.member_bytes)
    return path


def start_load(ctx, scope, d, uri):
    out_json = os.path.join(d, "load.json")
    with open(os.path.join(d, "load.log"), "wb") as logf:
        p = fio.start_background(LOAD, uri, shapes.region(ctx), out_json,
                                 logf)
    scope.register(p.kill)      # harmless once stopped
    # Let the load settle (connect, reach its queue depth) so the
    # rebuild starts under it, and fio has figures to report even if
    # the rebuild is over at once.
    time.sleep(1)
    return p, out_json


def kernel_rebuild(ctx, spec, fill_bytes):
    """MB/s of btrfs replacing one lost device, or why not."""
    if ctx.btrfs_why:
        return ctx.btrfs_why
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, "rebuild-btrfs")
        try:
            fs = peers.Btrfs(scope, d, spec.btrfs_profile, spec.members,
                             spec.member_bytes, fill_bytes * 2)
            ctx.prefill(fs.uri, fill_bytes >> 20 << 20)
            devid = spec.members
            used = fs.used_bytes(devid)
            fs.degrade(1)
            fs.server.stop()    # nothing reads while btrfs replaces
            return used / fs.replace(devid) / 1e6
        except (command.CommandFailed, RuntimeError) as e:
            return measure.peer_failed(ctx, "btrfs", e)


def member_file(ctx, spec, fio_job):
    """MB/s of fio_job (fio.read_file) on one written file of a
    member's size."""
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, "member-file")
        path = os.path.join(d, "m.img")
        arrays.written(path, spec.member_bytes)
        return fio_job(path, spec.member_bytes,
                       os.path.join(d, "fio.json")).mb_per_s
