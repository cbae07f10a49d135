"""What the figures were measured on: CPU, memory, kernel, the
filesystem under the arrays, tool versions and the load, so a reader
can judge a table from another machine."""
import os
import platform

import command
import paths


def _first(path, prefix):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(prefix):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def fs_type(path):
    return (command.run(["stat", "-f", "-c", "%T", path], quiet=True)
            or "?").strip()


def describe(scratch):
    rev = command.run(["git", "-C", paths.TOP, "describe", "--always",
                       "--dirty"], quiet=True) or "?"
    fio_v = command.run(["fio", "--version"], quiet=True) or "?"
    nbdkit_v = command.run(["nbdkit", "--version"], quiet=True) or "?"
    return [
        f"- CPU: {_first('/proc/cpuinfo', 'model name')}, "
        f"{os.cpu_count()} cores; memory: "
        f"{_first('/proc/meminfo', 'MemTotal')}",
        f"- kernel {platform.release()}; {nbdkit_v.strip()}; "
        f"{fio_v.strip()}; nbdraid {rev.strip()}",
        f"- arrays and peers on {fs_type(scratch)} ({scratch})",
    ]
