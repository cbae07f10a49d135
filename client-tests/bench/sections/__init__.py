"""The benchmark's sections, in the order they run.  Each module has a
TITLE and run(ctx), which adds rows to ctx.rows and returns a sentence
saying what was measured on what.  OPT_IN sections run only when
named with --only."""
from . import (levels, sweep, readers, degraded, rebuild, reshape, bitmap,
               policy, journal, nested, latency, rss, disks)

ALL = {"levels": levels, "sweep": sweep, "readers": readers,
       "degraded": degraded, "rebuild": rebuild, "reshape": reshape,
       "bitmap": bitmap, "policy": policy, "journal": journal,
       "nested": nested,
       "latency": latency, "rss": rss, "disks": disks}
# disks measures members that sleep (nbdkit's rate and delay filters):
# minutes of a run that say nothing about the tmpfs targets.
OPT_IN = {"disks"}
