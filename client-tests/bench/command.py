"""Run a command; on failure raise an error that names it and quotes
its stderr, so a broken run says which tool broke and why."""
import shlex
import subprocess


class CommandFailed(Exception):
    pass


class CommandStuck(CommandFailed):
    """It outlived its timeout.  It is left behind rather than waited
    for: a process stuck in the kernel (D state) never dies."""


def run(argv, quiet=False, timeout=None, input=None):
    """Run argv to completion; return its stdout as text (None if it
    failed and QUIET)."""
    argv = [str(a) for a in argv]
    p = subprocess.Popen(argv, text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL if input is None
                         else subprocess.PIPE)
    try:
        out, err = p.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        raise CommandStuck(f"{shlex.join(argv)}: not done after {timeout} s"
                           f" (pid {p.pid}, left behind)")
    if p.returncode != 0:
        if quiet:
            return None
        lines = (err.strip() or out.strip()).splitlines()[-5:]
        raise CommandFailed(f"{shlex.join(argv)}: exit {p.returncode}: "
                            + " / ".join(lines))
    return out
