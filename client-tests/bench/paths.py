"""Where the built nbdraid lives (the source tree, unless the
environment names a build tree, as `make bench` does)."""
import os

_here = os.path.dirname(os.path.abspath(__file__))
TOP = os.environ.get("abs_top_builddir") or os.path.normpath(
    os.path.join(_here, "..", ".."))
PLUGIN = os.path.join(TOP, "plugins", "raid", ".libs",
                      "nbdkit-raid-plugin.so")
NBDRAID = os.path.join(TOP, "server", "cli", "nbdraid")
