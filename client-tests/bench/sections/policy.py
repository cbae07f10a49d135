"""What closing RAID5's write hole costs: writes to a RAID5 with each of
md's consistency policies, resync (nothing kept), bitmap (the default)
and ppl (a partial parity log on each stripe's parity member)."""
import arrays
import cleanup
import fio
import measure
from . import shapes

TITLE = "Consistency policy (RAID5 write hole)"
JOBS = [fio.SEQ_WRITE, fio.RAND_WRITE]
POLICIES = (("resync", False, False), ("bitmap", True, False),
            ("ppl", False, True))


def run(ctx):
    region = shapes.region(ctx)
    with cleanup.Scope() as scope:
        cases = []
        for name, bitmap, ppl in POLICIES:
            spec = shapes.spec(ctx, 5, 6, bitmap=bitmap, ppl=ppl)
            d = ctx.scratch(scope, f"policy-{name}")
            array = arrays.Array(scope, d, "a", spec)
            array.start()
            cases.append((f"{spec.label} {name}", array))
        measure.compare(ctx, "policy", cases, spec, JOBS, region)
    return (f"over {shapes.mib(region)}; btrfs raid5 has no such policy: "
            "its figures beside every row are the same btrfs; every round "
            "takes the three arrays in turn.")
