"""The sha256 of a byte range of an NBD export, read through nbdcopy:
what a section compares before and after an operation that must leave
the data as it was (a reshape), so that a fast but wrong one cannot
post a figure."""
import hashlib
import subprocess

PIECE = 4 << 20


def sha256(uri, start, end):
    """Hex sha256 of bytes START to END of URI."""
    h = hashlib.sha256()
    p = subprocess.Popen(["nbdcopy", uri, "-"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    at = 0
    try:
        while at < end:
            piece = p.stdout.read(min(PIECE, end - at))
            if not piece:
                break
            if at + len(piece) > start:
                h.update(piece[max(0, start - at):])
            at += len(piece)
    finally:
        # The export may be longer than END: stop nbdcopy there.
        p.kill()
        err = p.communicate()[1].decode(errors="replace").strip()
    if at < end:
        raise RuntimeError(f"nbdcopy {uri}: {at} bytes read, not {end}: "
                           + " / ".join(err.splitlines()[-3:]))
    return h.hexdigest()
