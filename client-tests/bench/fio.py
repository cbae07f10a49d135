"""fio jobs through NBD (--ioengine=nbd) and the figures we keep from
fio's JSON: MB/s, IOPS and the 99th percentile completion latency."""
import json
import os
import signal
import statistics
import subprocess
from dataclasses import dataclass

import command


@dataclass(frozen=True)
class Job:
    name: str           # the row label, e.g. "seq read 1M qd16"
    rw: str             # fio --rw
    bs: str
    iodepth: int
    numjobs: int = 1    # >1: concurrent streams, each on its own range
    extra: tuple = ()   # more fio options, e.g. VERIFIED's

    @property
    def is_random(self):
        return self.rw.startswith("rand")

    @property
    def direction(self):
        return "write" if "write" in self.rw else "read"


SEQ_READ = Job("seq read 1M qd16", "read", "1M", 16)
SEQ_WRITE = Job("seq write 1M qd16", "write", "1M", 16)
RAND_READ = Job("rand read 4K qd32", "randread", "4k", 32)
RAND_READ_QD1 = Job("rand read 4K qd1", "randread", "4k", 1)
RAND_WRITE = Job("rand write 4K qd32", "randwrite", "4k", 32)
READERS_12 = Job("12 seq readers 1M qd1", "read", "1M", 1, numjobs=12)
READERS_1 = Job("1 seq reader 1M qd1", "read", "1M", 1)
# Writes that verify_read can check afterwards: every block is fresh
# random data behind a header with its offset and a crc32c of the
# block, so a block that reads back torn, stale in part or from
# another place fails.  (fio's verify_pattern=%o is cheaper but the
# same in every 4K of a block: it misses 4K blocks swapped within it.)
VERIFIED = ("--verify=crc32c", "--do_verify=0")
# Fresh random data in every block (fio otherwise rewrites one buffer,
# a few bytes scrambled), so that a checksum of the region tells
# blocks that moved apart.
DISTINCT = ("--refill_buffers",)


@dataclass
class Result:
    mb_per_s: float
    iops: float
    p99_us: float


def median(results):
    """The median of several runs of one job, figure by figure: one
    run the VM slowed or sped does not move it."""
    return Result(*(statistics.median(getattr(r, f) for r in results)
                    for f in ("mb_per_s", "iops", "p99_us")))


def _args(job, region_bytes):
    per_job = region_bytes // job.numjobs // (1 << 20) << 20
    args = [f"--name={job.rw}", f"--rw={job.rw}", f"--bs={job.bs}",
            f"--iodepth={job.iodepth}", f"--size={per_job}"]
    if job.numjobs > 1:
        args += [f"--numjobs={job.numjobs}", f"--offset_increment={per_job}",
                 "--group_reporting"]
    if job.is_random:
        args += ["--norandommap", "--randrepeat=0"]
    return args + list(job.extra)


def _parse(path, job):
    with open(path) as f:
        text = f.read()
    # fio may print notes before the JSON object, even into --output.
    j = json.loads(text[text.index("{"):])
    r = j["jobs"][0][job.direction]
    p99 = r["clat_ns"].get("percentile", {}).get("99.000000", 0) / 1000
    return Result(r["bw_bytes"] / 1e6, r["iops"], p99)


def run(job, uri, region_bytes, runtime_s, ramp_s, out_json):
    """Run JOB against the NBD URI for RUNTIME_S seconds (after RAMP_S
    seconds not counted), over the first REGION_BYTES of the export."""
    command.run(["fio", "--ioengine=nbd", f"--uri={uri}", "--time_based",
             f"--runtime={runtime_s}", f"--ramp_time={ramp_s}",
             "--output-format=json", f"--output={out_json}",
             *_args(job, region_bytes)])
    return _parse(out_json, job)


def run_device(job, path, region_bytes, runtime_s, ramp_s, out_json):
    """Run JOB straight on the block device PATH with O_DIRECT (libaio),
    as run does through NBD: what the device does with nothing in
    between."""
    command.run(["fio", "--ioengine=libaio", "--direct=1",
                 f"--filename={path}", "--time_based",
                 f"--runtime={runtime_s}", f"--ramp_time={ramp_s}",
                 "--output-format=json", f"--output={out_json}",
                 *_args(job, region_bytes)])
    return _parse(out_json, job)


def prefill(uri, region_bytes, out_json, offset=0, extra=()):
    """Write REGION_BYTES from OFFSET once, so reads read data, not
    holes (a hole on btrfs or in a sparse file costs nothing to
    read).  EXTRA: more fio options, e.g. DISTINCT or VERIFIED."""
    command.run(["fio", "--ioengine=nbd", f"--uri={uri}", "--name=prefill",
             "--rw=write", "--bs=1M", "--iodepth=16", f"--offset={offset}",
             f"--size={region_bytes}", "--output-format=json",
             f"--output={out_json}", *extra])


def verify_read(uri, region_bytes, out_json):
    """Read the first REGION_BYTES back and check every block a job
    with VERIFIED options wrote there: fio fails on a bad checksum or
    a block from another offset."""
    command.run(["fio", "--ioengine=nbd", f"--uri={uri}", "--name=verify",
             "--rw=read", "--bs=1M", "--iodepth=16",
             f"--size={region_bytes}", "--verify=crc32c", "--verify_fatal=1",
             "--output-format=json", f"--output={out_json}"])


def start_background(job, uri, region_bytes, out_json, logf, ramp_s=0):
    """Start JOB with no time limit (stopped with SIGINT, after which
    fio writes its JSON), its first RAMP_S seconds not counted; return
    the Popen."""
    return subprocess.Popen(
        ["fio", "--ioengine=nbd", f"--uri={uri}", "--time_based",
         "--runtime=3600", f"--ramp_time={ramp_s}",
         "--output-format=json", f"--output={out_json}",
         *_args(job, region_bytes)],
        stdin=subprocess.DEVNULL, stdout=logf, stderr=logf)


def stop_background(popen, job, out_json):
    popen.send_signal(signal.SIGINT)
    popen.wait(timeout=60)
    if not os.path.exists(out_json):
        raise RuntimeError(f"fio {job.name}: no output after SIGINT")
    return _parse(out_json, job)


def write_file(path, size_bytes, out_json):
    """Sequential 1M writes straight to a file: what one member can
    take, the ceiling for rebuilding onto it."""
    return _file_job(Job("member write", "write", "1M", 1), path,
                     size_bytes, out_json, ["--end_fsync=1"])


def read_file(path, size_bytes, out_json):
    """Sequential 1M reads straight from a file: what one member gives,
    the ceiling for checking it."""
    return _file_job(Job("member read", "read", "1M", 1), path, size_bytes,
                     out_json, [])


def _file_job(job, path, size_bytes, out_json, extra):
    command.run(["fio", f"--name={job.name}", f"--filename={path}",
             "--ioengine=psync", f"--rw={job.rw}", f"--bs={job.bs}",
             f"--size={size_bytes}", *extra,
             "--output-format=json", f"--output={out_json}"])
    return _parse(out_json, job)
