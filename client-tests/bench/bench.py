"""nbdraid's benchmark: run the sections, then write bench.md,
bench.csv and sweep.png into the output directory.

Started by ./run, which installs the tools and builds nbdraid first.
"""
import argparse
import os
import sys
import tempfile
import time
import traceback

import cleanup
import command
import machine
import measure
import paths
import peers
import plot
import results
import sections
import targets


def parse_args():
    p = argparse.ArgumentParser(
        prog="client-tests/bench/run",
        epilog="The run script also takes --no-build: use the tree as "
        "built, without installing build dependencies or running make.")
    p.add_argument("--quick", action="store_true",
                   help="tiny regions, 1 s per job, a subset of cases")
    p.add_argument("--only", action="append", choices=sections.ALL,
                   metavar="GROUP", help="run only this section (repeatable):"
                   " " + ", ".join(sections.ALL) + "; "
                   + ", ".join(sections.OPT_IN) + " runs only when named")
    p.add_argument("--dir", help="put the arrays in DIR (default: tmpfs)")
    p.add_argument("--out", default="bench-results",
                   help="output directory (default ./bench-results)")
    p.add_argument("--no-kernel-peer", action="store_true",
                   help="leave btrfs out (the smoke test: a btrfs that"
                   " wedges the kernel must not take a test run with it)")
    p.add_argument("--disk-members", type=int, default=6,
                   help="members of the disks section's arrays (default 6;"
                   " 16 for wide arrays)")
    p.add_argument("--disk-levels", type=_levels, default=(0, 5, 6, 10),
                   metavar="L,L...", help="the disks section's levels "
                   "(default 0,5,6,10; the smoke test runs one)")
    p.add_argument("--runtime", type=int,
                   help="seconds per run of a job (default 3, --quick 1)")
    p.add_argument("--rounds", type=int,
                   help="rounds of nbdraid, ceiling, btrfs, ceiling, nbdraid"
                   " per job (default 3, --quick 1)")
    return p.parse_args()


def _levels(text):
    try:
        levels = tuple(int(x) for x in text.split(","))
    except ValueError:
        levels = ()
    if not levels or not set(levels) <= {0, 5, 6, 10}:
        raise argparse.ArgumentTypeError(
            f"'{text}': levels of 0, 5, 6 and 10, comma-separated")
    return levels


def scratch_root(scope, where):
    """A fresh directory for the arrays: under DIR, or on /dev/shm,
    which must then be tmpfs (arrays in RAM, no disk in the figures)."""
    if where is None:
        where = "/dev/shm"
        if machine.fs_type(where) != "tmpfs":
            sys.exit("bench: /dev/shm is not tmpfs; name a directory "
                     "with --dir")
    os.makedirs(where, exist_ok=True)
    root = tempfile.mkdtemp(prefix="nbdraid-bench.", dir=where)
    scope.register(cleanup.remove_tree, root)
    return root


def check_tools():
    for f in (paths.PLUGIN, paths.NBDRAID):
        if not os.path.exists(f):
            sys.exit(f"bench: {f} is missing: build nbdraid first "
                     "(./.ci/build, or run without --no-build)")
    engines = command.run(["fio", "--enghelp"], quiet=True) or ""
    if "nbd" not in engines.split():
        sys.exit("bench: fio has no nbd ioengine (fio --enghelp)")


def run_sections(ctx, names):
    """Run each section in its own scope; a section that fails is
    reported in the table and the others still run."""
    done, failures = [], []
    for name in names:
        module = sections.ALL[name]
        t0 = time.monotonic()
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        try:
            blurb = module.run(ctx)
        except (command.CommandFailed, RuntimeError, OSError,
                KeyError, ValueError) as e:
            traceback.print_exc()
            blurb = f"**FAILED**: {e}"
            failures.append(name)
        blurb += f" ({time.monotonic() - t0:.0f} s)"
        done.append((name, module.TITLE, blurb))
    return done, failures


def header(args, ctx, scratch, started, load_before, elapsed, btrfs_why):
    cmdline = "client-tests/bench/run " + " ".join(sys.argv[1:])
    return "\n".join([
        "# nbdraid benchmark", "",
        f"`{cmdline.strip()}`, {time.strftime('%Y-%m-%d %H:%M UTC', started)}"
        f", {elapsed / 60:.1f} min, {'quick' if args.quick else 'full'} sizes"
        f", {'sections ' + ', '.join(args.only) if args.only else 'every section'}.",
        "",
        *machine.describe(scratch),
        f"- load average before: {load_before}; after: {machine.load()}",
        *([f"- {btrfs_why}"] if btrfs_why else []),
        "",
        "Each nbdraid figure stands beside the same fio job (ioengine=nbd, "
        "UNIX socket) on the transport ceiling (`nbdkit file`, one file of "
        "the array's size) and on the kernel peer (btrfs with the same "
        "profile on loop devices, one big file served by `nbdkit file "
        "cache=none`), on the same filesystem, in the same session; "
        f"{'nbdraid and the ceiling' if btrfs_why else 'the three'} take "
        f"turns on each job, {ctx.rounds} "
        f"round{'s' if ctx.rounds > 1 else ''} of nbdraid, ceiling, "
        f"{'' if btrfs_why else 'btrfs, '}ceiling, nbdraid, "
        f"{ctx.runtime_s} s a run; each side's "
        "figure is the median of its runs, and the note gives the range "
        "of the rounds' ratios to the ceiling (this VM's speed jumps from "
        "run to run).  "
        "`x peer` is nbdraid / peer: above 1 nbdraid is faster, except "
        "for latency (us) and memory (KiB), where below 1 is better.", "",
        ""])


def main():
    args = parse_args()
    cleanup.install_signal_handlers()
    check_tools()
    os.makedirs(args.out, exist_ok=True)
    names = args.only or [n for n in sections.ALL
                          if n not in sections.OPT_IN]
    started, load_before, t0 = time.gmtime(), machine.load(), time.monotonic()
    with cleanup.Scope() as scope:
        root = scratch_root(scope, args.dir)
        runtime = args.runtime or (1 if args.quick else 3)
        rounds = args.rounds or (1 if args.quick else 3)
        ctx = measure.Context(root, runtime, 0 if args.quick else 1,
                              rounds, args.quick,
                              "kernel peer skipped (--no-kernel-peer)"
                              if args.no_kernel_peer
                              else peers.btrfs_unavailable(),
                              disk_members=args.disk_members,
                              disk_levels=args.disk_levels)
        done, failures = run_sections(ctx, names)
        btrfs_why = ctx.btrfs_why
        md = header(args, ctx, root, started, load_before,
                    time.monotonic() - t0, btrfs_why)
    md += targets.markdown(ctx.rows)
    md += results.markdown(done, ctx.rows, btrfs_why)
    png = plot.sweep(ctx.rows, args.out)
    if png:
        md += "\n![chunk sweep](sweep.png)\n"
    disks_png = plot.disks(ctx.rows, args.out)
    if disks_png:
        md += "\n![chunk sweep on disks](disks.png)\n"
    results.write_csv(os.path.join(args.out, "bench.csv"), ctx.rows)
    with open(os.path.join(args.out, "bench.md"), "w") as f:
        f.write(md)
    print(f"bench: wrote {args.out}/bench.md, bench.csv"
          + (", sweep.png" if png else "")
          + (", disks.png" if disks_png else ""), file=sys.stderr)
    if failures:
        sys.exit(f"bench: sections failed: {', '.join(failures)}")


if __name__ == "__main__":
    main()
