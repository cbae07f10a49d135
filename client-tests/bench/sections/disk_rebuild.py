"""Rebuild on members that behave like disks (disks.py's profile): an
array of RAID5, RAID6 or RAID10 at disks.MAIN_CHUNK loses a member and
a spare, itself such a member, is added; timed from `nbdraid add` until
`nbdraid wait` returns with every role working.  Idle, then once more
(another role) under a random-read client; then a check of the whole
array must find no mismatch.

The whole array is written first, through nbdraid, so that parity and
copies hold real data.  Half written, as the tmpfs rebuild section
does, would measure the emulation rather than the rebuild: a window
whose sources are all holes is zeroed on the spare in one request,
which the delay filter charges 2 ms and the rate filter nothing (it
limits only reads and writes), so every hole would count as rebuilt at
no cost and half holes would come close to doubling the rate.  A disk
has no holes: md reads all of it.

The rate is the member bytes rebuilt per second, a fraction of one
member's bandwidth: the profile's (nominal), and what one member wrote
alone just before the level's arrays (disks.py's seq write job: the
spare is written as fast as that at best).  speed-min is lifted as in
rebuild.py, or its default would hold the rebuild under load at
10 MiB/s, a quarter of a member.  The load is rebuild.py's, random 4K
reads at queue depth 32: each costs a member a whole request (2 ms, a
seek) for 4K, the load that takes most from a rebuild on a disk, where
1M sequential reads would only share the bandwidth; its IOPS stand
beside the rebuild, a fraction of the array's random read limit.
--quick rebuilds once idle; a full run once a round (--rounds), the
median with the rounds' range.
"""
import os
import statistics
import time

import arrays
import cleanup
import fio
import servers
from results import Row
from . import disks, rebuild, shapes

LEVELS = (5, 6, 10)
TARGET = 0.80           # of one member's bandwidth, idle (the issue's)
TIMEOUT_S = 600


def member_bytes(ctx):
    """Members of 128 MiB in --quick (a rebuild of about 4 s), else of
    disks.py's size."""
    return (128 if ctx.quick else 256) * shapes.MiB


def run(ctx, profile, level, member):
    """Rebuild LEVEL's array over PROFILE members, idle (ctx.rounds
    times) and under load; MEMBER: disks._member's results, one member
    measured alone."""
    n = ctx.disk_members
    size = member_bytes(ctx)
    spec = arrays.Spec(f"{profile.name} RAID{level} {n}x{shapes.mib(size)} "
                       f"chunk {disks.MAIN_CHUNK}", level, n, size,
                       disks.MAIN_CHUNK)
    with cleanup.Scope() as scope:
        d = ctx.scratch(scope, f"disks-rebuild-raid{level}")
        uris = [_disk(scope, d, f"d{i}", profile, size) for i in range(n)]
        array = arrays.Array(scope, d, "a", spec, disks=uris)
        array.start()
        ctx.prefill(array.uri, array.array_bytes() >> 20 << 20)
        rebuilt = array.status()["member_bytes"]
        array.speed_limit(1000000, 0)
        # Each round fails another role, the last ones first.
        idle = [rebuilt / _rebuild(scope, d, array, profile,
                                   n - 1 - r % n, f"idle{r}") / 1e6
                for r in range(ctx.rounds)]
        load, load_json = rebuild.start_load(ctx, scope, d, array.uri)
        loaded = rebuilt / _rebuild(scope, d, array, profile,
                                    n - 1 - ctx.rounds % n, "loaded") / 1e6
        client = fio.stop_background(load, rebuild.LOAD, load_json)
        array.check()
        array.wait_rebuilt(TIMEOUT_S)
        if array.status()["mismatches"]:
            raise RuntimeError(f"{array.conf}: check found mismatches after "
                               "the rebuilds")
        # Before the members' servers, which the scope would stop
        # first: stopped under a running nbdraid, all but the first
        # took servers.stop's 30 s each, and nbdraid too.
        array.stop()
    _add_rows(ctx, profile, spec, member, idle, loaded, client)


def _disk(scope, d, name, profile, size):
    """The URI of an NBD export of PROFILE over a sparse file of SIZE
    bytes (the prefill writes the members; nothing asks whether a
    spare has holes)."""
    path = os.path.join(d, f"{name}.img")
    with open(path, "wb") as f:
        f.truncate(size)
    return servers.start(scope, d, name, profile.filters(path)).uri


def _rebuild(scope, d, array, profile, role, name):
    """Fail ROLE and remove its device, add a fresh spare of PROFILE;
    seconds from the add until every role works."""
    gone = array.device(role)
    array.fail(role)
    array.remove(gone)
    spare = _disk(scope, d, f"spare-{name}", profile, array.spec.member_bytes)
    t0 = time.monotonic()
    array.add(spare)
    array.wait_rebuilt(TIMEOUT_S)
    return time.monotonic() - t0


def _add_rows(ctx, profile, spec, member, idle, loaded, client):
    """IDLE: the idle rounds' MB/s; LOADED: MB/s; CLIENT: fio's result."""
    measured = member[fio.SEQ_WRITE].mb_per_s
    case = f"{spec.label} 1 failed"
    rate = statistics.median(idle)
    verdict = "met" if rate / profile.mb_per_s >= TARGET else "missed"
    spread = (f"{min(idle) / profile.mb_per_s:.2f}-"
              f"{max(idle) / profile.mb_per_s:.2f}" if len(idle) > 1 else "")
    ctx.rows.append(Row(disks.SECTION, case, "rebuild, idle", "rebuild rate",
                        "MB/s", rate, ceiling=profile.mb_per_s,
                        kernel=measured, spread=spread,
                        note=(f"median of {len(idle)} rounds; " if spread
                              else "") + f"target {TARGET:.2f} of one "
                        f"member's nominal bandwidth: {verdict}",
                        peer_names=disks.PEERS))
    ctx.rows.append(Row(disks.SECTION, case, "rebuild, under client load",
                        "rebuild rate", "MB/s", loaded,
                        ceiling=profile.mb_per_s, kernel=measured,
                        note=f"the client: {rebuild.LOAD.name}",
                        peer_names=disks.PEERS))
    # A random 4K read costs one member request: the healthy array's
    # limit is every member's IOPS.
    ctx.rows.append(Row(
        disks.SECTION, f"{case}, during the rebuild", rebuild.LOAD.name,
        "IOPS", "IOPS", client.iops,
        ceiling=spec.members * profile.iops,
        kernel=spec.members * member[fio.RAND_READ].iops,
        note="the client beside the loaded rebuild, against the healthy "
        "array's limit", peer_names=disks.PEERS))
