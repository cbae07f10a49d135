#!/usr/bin/env bash
# The superblocks, not the order of the config's lines, say which device
# holds which role: a config listing the members shuffled, or a rebuilt
# spare still listed as "spare", serves the same data.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdcopy

new_array r6 6 left-asymmetric 64K 5 4M
start_server "$conf"
random_file "$T/data" "$(export_size)"
nbdcopy "$T/data" "$uri"
stop_server
d=$T/r6
write_config "$T/shuffled.conf" 6 left-asymmetric 64K \
  "$d/d3.img" "$d/d0.img" "$d/d4.img" "$d/d2.img" "$d/d1.img"
start_server "$T/shuffled.conf"
nbdcopy "$uri" "$T/out"
cmp "$T/data" "$T/out" || die "shuffled config reads different data"
stop_server
echo "ok: a shuffled config serves the same array"
