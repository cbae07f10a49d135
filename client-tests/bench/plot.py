"""The plots: sweep.png, MB/s against chunk size for the chunk sweep,
with the btrfs raid6 peer as flat lines (it has no chunk size); and
disks.png, the disks section's sequential jobs as fractions of the
members' limit against chunk size."""
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


def disks(rows, out_dir, profile="disk"):
    """Write disks.dat and disks.png into OUT_DIR: the disks section's
    sequential jobs on PROFILE's members, each level's read and write
    as a fraction of the members' nominal limit against chunk size.
    Returns the PNG's path, or None when the section did not run."""
    points = {}
    members = "?"
    for r in rows:
        m = re.match(rf"{profile} (RAID\d+) (\d+) members chunk (\d+)K$",
                     r.case)
        if r.section != "disks" or not m or r.job not in (
                "seq read 1M qd16", "seq write 1M qd16") or not r.ceiling:
            continue
        members = m.group(2)
        series = f"{m.group(1)} {r.job.split()[1]}"
        points.setdefault(series, {})[int(m.group(3))] = r.nbdraid / r.ceiling
    if not points:
        return None
    if not shutil.which("gnuplot"):
        print("bench: gnuplot is not installed: no disks.png", file=sys.stderr)
        return None
    names = sorted(points)
    chunks = sorted({k for p in points.values() for k in p})
    dat = os.path.join(out_dir, "disks.dat")
    with open(dat, "w") as f:
        f.write("# chunk_KiB " + " ".join(n.replace(" ", "_") for n in names)
                + "  (fractions of the nominal limit)\n")
        for k in chunks:
            f.write(f"{k} " + " ".join(str(points[n].get(k, "NaN"))
                                       for n in names) + "\n")
    png = os.path.join(out_dir, "disks.png")
    plots = ", \\\n     ".join(
        f"'{dat}' using 1:{i + 2} with linespoints "
        f"{'dashtype 2 ' if 'write' in n else ''}title '{n}'"
        for i, n in enumerate(names))
    script = f"""
set terminal png size 800,500
set output '{png}'
set title 'nbdraid on {members} {profile} members: sequential 1M, qd 16'
set xlabel 'chunk (KiB)'
set ylabel 'fraction of the members limit'
set logscale x 2
set yrange [0:1.1]
set key outside bottom center horizontal
set grid
plot {plots}
"""
    command.run(["gnuplot"], input=script)
    return png
