"""Rows of figures and their two outputs: bench.csv and bench.md.

A row is one figure of nbdraid beside the same job on the two peers
(either may be missing, with a note saying why).  Ratios are
nbdraid / peer: above 1 nbdraid is faster, except for latency rows
(unit "us"), where below 1 is better.
"""
import csv
from dataclasses import dataclass, field

COLUMNS = ["section", "case", "job", "metric", "unit", "nbdraid",
           "ceiling", "ratio_ceiling", "ratio_ceiling_range", "kernel",
           "ratio_kernel", "note"]


@dataclass
class Row:
    section: str
    case: str
    job: str
    metric: str
    unit: str
    nbdraid: float
    ceiling: float = None
    kernel: float = None
    note: str = ""
    spread: str = ""    # the range of the rounds' ratios to the ceiling
    peer_names: tuple = field(default=("nbdkit file", "btrfs"))

    def ratio(self, peer):
        return self.nbdraid / peer if peer else None


def _num(x, digits=3):
    if x is None:
        return ""
    return f"{x:.{digits}g}" if abs(x) < 1000 else f"{x:.0f}"


def _shorten(note, said_above):
    if said_above and said_above in note:
        return note.replace(said_above, "kernel peer skipped (see above)")
    return note


def _note(row, said_above):
    spread = f"x {row.peer_names[0]} per round {row.spread}"
    return "; ".join(n for n in (row.spread and spread,
                                 _shorten(row.note, said_above)) if n)


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([r.section, r.case, r.job, r.metric, r.unit,
                        _num(r.nbdraid, 6), _num(r.ceiling, 6),
                        _num(r.ratio(r.ceiling)), r.spread, _num(r.kernel, 6),
                        _num(r.ratio(r.kernel)), r.note])


def read_csv(path):
    """The rows write_csv wrote (ratios are recomputed from the
    figures)."""
    def num(x):
        return float(x) if x else None
    with open(path, newline="") as f:
        return [Row(r["section"], r["case"], r["job"], r["metric"], r["unit"],
                    num(r["nbdraid"]), num(r["ceiling"]), num(r["kernel"]),
                    r["note"], r["ratio_ceiling_range"])
                for r in csv.DictReader(f)]


def markdown(sections, rows, said_above=""):
    """One table per section, in the order the sections ran, and a new
    one where the rows' peers change.  A note the header already gives
    (SAID_ABOVE) is shortened in the rows."""
    out = []
    for name, title, blurb in sections:
        mine = [r for r in rows if r.section == name]
        if not mine:
            continue
        out += [f"## {title}", "", blurb]
        peers = None
        for r in mine:
            if r.peer_names != peers:
                peers = r.peer_names
                ceiling, kernel = peers
                out += ["", f"| case | job | metric | nbdraid | {ceiling} "
                        f"| x {ceiling} | {kernel} | x {kernel} | note |",
                        "|---|---|---|--:|--:|--:|--:|--:|---|"]
            metric = (r.metric if r.metric == r.unit
                      else f"{r.metric} ({r.unit})")
            out.append(
                f"| {r.case} | {r.job} | {metric} "
                f"| {_num(r.nbdraid)} | {_num(r.ceiling)} "
                f"| {_num(r.ratio(r.ceiling))} | {_num(r.kernel)} "
                f"| {_num(r.ratio(r.kernel))} "
                f"| {_note(r, said_above)} |")
        out.append("")
    return "\n".join(out)
