"""Undo everything the benchmark set up, on every exit path.

Servers, mounts, loop devices and scratch directories are registered in
a Scope the moment they exist and undone in reverse order when the
scope's `with` block ends, normally, by an error, or by a signal:
SIGINT, SIGTERM and SIGHUP are turned into SystemExit so the unwinding
runs.  Scopes nest, so an array's files go as soon as its section is
done and the tmpfs never holds more than one section's arrays.
"""
import contextlib
import signal
import subprocess
import sys


def install_signal_handlers():
    def on_signal(signum, _frame):
        sys.exit(128 + signum)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)


class Scope(contextlib.ExitStack):
    def register(self, fn, *args):
        """Run fn(*args) when the scope ends.  A failing cleanup is
        reported and the others still run."""
        def guarded():
            try:
                fn(*args)
            except Exception as e:
                print(f"bench: cleanup {fn.__name__}: {e}", file=sys.stderr)
        self.callback(guarded)


def remove_tree(path):
    """rm -rf PATH, unless something is still mounted under it: rm
    would descend into the mount (even with --one-file-system it reads
    the directory), and into a wedged btrfs it would hang for good."""
    prefix = path.rstrip("/") + "/"
    with open("/proc/mounts") as f:
        mounted = [line.split()[1] for line in f
                   if line.split()[1].startswith(prefix)]
    if mounted:
        raise RuntimeError(f"left {path} behind: {mounted[0]} is still "
                           "mounted")
    subprocess.run(["rm", "-rf", "--one-file-system", path], check=True)
