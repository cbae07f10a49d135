"""Run a command; on failure raise an error that names it and quotes
its stderr, so a broken run says which tool broke and why."""
import shlex
import subprocess


class CommandFailed(Exception):
    pass


def run(argv, quiet=False, **kw):
    """Run argv to completion; return its stdout as text (None if it
    failed and QUIET)."""
    if "input" not in kw:
        kw["stdin"] = subprocess.DEVNULL
    p = subprocess.run([str(a) for a in argv], capture_output=True,
                       text=True, **kw)
    if p.returncode != 0:
        if quiet:
            return None
        err = (p.stderr.strip() or p.stdout.strip()).splitlines()[-5:]
        raise CommandFailed(f"{shlex.join(map(str, argv))}: exit "
                            f"{p.returncode}: " + " / ".join(err))
    return p.stdout
