"""The benchmark's sections, in the order they run.  Each module has a
TITLE and run(ctx), which adds rows to ctx.rows and returns a sentence
saying what was measured on what."""
from . import (levels, sweep, readers, degraded, rebuild, bitmap, nested,
               latency, rss)

ALL = {"levels": levels, "sweep": sweep, "readers": readers,
       "degraded": degraded, "rebuild": rebuild, "bitmap": bitmap,
       "nested": nested, "latency": latency, "rss": rss}
