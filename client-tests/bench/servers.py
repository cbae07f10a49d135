"""nbdkit servers on UNIX sockets: the RAID plugin and the file plugin.

Each runs in the foreground as our child (so it can be waited for),
with --exit-with-parent so a benchmark killed by SIGKILL leaves no
server behind; the scope stops it on every other exit.
"""
import os
import subprocess
import time

import paths


class Server:
    def __init__(self, popen, sock, log):
        self.popen = popen
        self.sock = sock
        self.log = log
        self.uri = f"nbd+unix:///?socket={sock}"

    @property
    def pid(self):
        return self.popen.pid

    def peak_rss_kib(self):
        """VmHWM: the most resident memory the server has had."""
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        raise RuntimeError(f"nbdkit pid {self.pid}: no VmHWM in /proc")

    def stop(self):
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


# Every server has the threads nbdraid is served with (README.md,
# "Serve a first array"; the systemd unit): nbdkit's default 16 held a
# client at queue depth 32 to 16 requests in flight, too few to keep 6
# disk-like members busy.  The ceiling and btrfs's server get the same,
# so that a ratio compares RAID, not thread counts.
THREADS = 64


def start(scope, workdir, name, plugin_args):
    """Serve `nbdkit PLUGIN_ARGS...` on WORKDIR/NAME.sock."""
    sock = os.path.join(workdir, f"{name}.sock")
    pidfile = os.path.join(workdir, f"{name}.pid")
    log = os.path.join(workdir, f"{name}.log")
    for f in (sock, pidfile):
        if os.path.exists(f):
            os.unlink(f)
    with open(log, "ab") as logf:
        popen = subprocess.Popen(
            ["nbdkit", "-f", "--exit-with-parent", "--threads", str(THREADS),
             "-U", sock, "-P", pidfile]
            + [str(a) for a in plugin_args],
            stdin=subprocess.DEVNULL, stdout=logf, stderr=logf)
    server = Server(popen, sock, log)
    scope.register(server.stop)
    # nbdkit writes its pidfile once it listens: poll for that, or its end.
    deadline = time.monotonic() + 30
    while not (os.path.exists(pidfile) and os.path.getsize(pidfile) > 0):
        if popen.poll() is not None or time.monotonic() > deadline:
            with open(log) as f:
                tail = f.read().strip().splitlines()[-3:]
            raise RuntimeError(f"nbdkit {name} did not start: "
                               + " / ".join(tail))
        time.sleep(0.05)
    return server


def raid(scope, conf, name, extra=()):
    return start(scope, os.path.dirname(conf), name,
                 [paths.PLUGIN, conf, *extra])


def file(scope, workdir, name, path, extra=()):
    return start(scope, workdir, name, ["file", path, *extra])
