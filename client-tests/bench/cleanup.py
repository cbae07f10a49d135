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
