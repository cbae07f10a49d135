"""sweep.png: MB/s against chunk size for the chunk sweep, with the
btrfs raid6 peer as flat lines (it has no chunk size)."""
import os
import re
import shutil
import sys

import command


def sweep(rows, out_dir):
    """Write sweep.dat and sweep.png into OUT_DIR; return the PNG's
    path, or None when the sweep did not run."""
    points = {}
    kernel = {}
    for r in rows:
        if r.section != "sweep":
            continue
        chunk_kib = int(re.search(r"(\d+)K", r.case).group(1))
        direction = "write" if "write" in r.job else "read"
        points.setdefault(chunk_kib, {})[direction] = r.nbdraid
        kernel[direction] = r.kernel
    if not points:
        return None
    if not shutil.which("gnuplot"):
        print("bench: gnuplot is not installed: no sweep.png", file=sys.stderr)
        return None
    dat = os.path.join(out_dir, "sweep.dat")
    with open(dat, "w") as f:
        f.write("# chunk_KiB read_MBps write_MBps btrfs_read btrfs_write\n")
        for k in sorted(points):
            p = points[k]
            f.write(f"{k} {p.get('read', 'NaN')} {p.get('write', 'NaN')} "
                    f"{kernel.get('read') or 'NaN'} "
                    f"{kernel.get('write') or 'NaN'}\n")
    png = os.path.join(out_dir, "sweep.png")
    script = f"""
set terminal png size 800,500
set output '{png}'
set title 'nbdraid RAID6, 16 members: sequential 1M, queue depth 16'
set xlabel 'chunk (KiB)'
set ylabel 'MB/s'
set logscale x 2
set key outside bottom center horizontal
set grid
plot '{dat}' using 1:2 with linespoints title 'nbdraid read', \\
     '{dat}' using 1:3 with linespoints title 'nbdraid write', \\
     '{dat}' using 1:4 with lines dashtype 2 title 'btrfs raid6 read', \\
     '{dat}' using 1:5 with lines dashtype 2 title 'btrfs raid6 write'
"""
    command.run(["gnuplot"], input=script)
    return png
