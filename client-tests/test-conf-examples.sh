#!/usr/bin/env bash
# Every example in conf/ is a valid config: with its member paths
# pointed at scratch files, nbdraid create accepts it and nbdkit serves
# an array of the expected size (a "member = missing" line stays
# missing).
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdinfo

for example in "$abs_top_srcdir"/conf/*.conf; do
  name=$(basename "$example" .conf)
  mkdir -p "$T/$name"
  # Point each member/spare at $T/NAME/mN.img, a 16 MiB sparse file.
  /usr/bin/python3 - "$example" "$T/$name" > "$T/$name/a.conf" <<'PY'
import re, sys
n = 0
for line in open(sys.argv[1]):
    m = re.match(r"(\s*(?:member|spare)\s*=\s*)(?!array:|missing\b)(\S+)(.*)", line)
    if m:
        path = "%s/m%d.img" % (sys.argv[2], n)
        open(path, "wb").truncate(16 << 20)
        line = m.group(1) + path + m.group(3) + "\n"
        n += 1
    sys.stdout.write(line)
    if line.strip() == "[array]":
        sys.stdout.write("socket = %s/ctl.sock\n" % sys.argv[2])
PY
  "$NBDRAID" create --assume-clean "$T/$name/a.conf" 2>> "$T/create.log" ||
    die "$name: create failed: $(tail -1 "$T/create.log")"
  conf=$T/$name/a.conf
  start_server "$conf"
  size=$(export_size)
  stop_server
  [ "$size" -gt 0 ] || die "$name: size $size"
  echo "ok: $name serves $size bytes"
  rm -f "$T/$name"/*.img
done
