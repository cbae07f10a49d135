#!/usr/bin/env bash
# Every example in conf/ is a valid config: with its member paths
# pointed at scratch files, nbdraid create accepts it and nbdkit serves
# an array of the expected size (a "member = missing" line stays
# missing).  NBD members (nbd://, nbds://...) become local nbdkit file
# exports on Unix sockets standing in for the hosts, nbds:// ones with
# TLS.  The expected size is worked out here, as mdadm and md would
# size the array, not asked of nbdraid.  No two examples may name the
# same array: they are meant to be served side by side.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdinfo

# expected_bytes CONFIG: the array's size as md makes it.  Per array:
# mdadm's v1.2 data offset for the smallest device (validate_geometry1
# in mdadm's super1.c, with a partial parity log's 1 MiB where one is
# kept), the component size rounded down to the chunk
# (64K for RAID1, as mdadm's Create.c does), then md's size for the
# level (raid5_size, raid10_size...).  A nested array's size is the
# device size of the array above it.
expected_bytes () {
  /usr/bin/python3 - "$1" <<'PY'
import os, re, sys

arrays, cur = {}, None
for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    m = re.fullmatch(r"\[(array|members)(?:\s+(\S+))?\]", line)
    if m:
        cur = m.group(1), arrays.setdefault(m.group(2) or "", {"members": []})
    elif "=" in line:
        key, value = (x.strip() for x in line.split("=", 1))
        if cur[0] == "members" and key == "member":
            cur[1]["members"].append(value.split()[0])
        elif cur[0] == "array" and key in ("level", "layout", "chunk",
                                           "consistency-policy"):
            cur[1][key] = value

def image(m):
    # An NBD member below is a file served on DIR/mN.sock from DIR/mN.img.
    u = re.search(r"[?&]socket=([^&]+)\.sock(?:&|$)", m)
    return u.group(1) + ".img" if u else m

def size(v):
    m = re.fullmatch(r"(\d+)([KMGT]?)(?:i?B)?", v, re.I)
    return int(m.group(1)) << 10 * " KMGT".index(m.group(2).upper() or " ")

def array_bytes(name):
    a = arrays[name]
    level, n = int(a["level"]), len(a["members"])
    dev = min(array_bytes(m[6:]) if m.startswith("array:")
              else os.path.getsize(image(m))
              for m in a["members"] if m != "missing") // 512   # sectors
    chunk = 0 if level == 1 else size(a.get("chunk", "512K")) // 512
    # mdadm super1.c choose_bm_space() and validate_geometry1(): the
    # bitmap's space, or 1 MiB for a partial parity log.
    bm = (2048 if a.get("consistency-policy") == "ppl"
          else 0 if dev < 128 else 256 if dev - 128 >= 200 << 21
          else 128 if dev - 8 > 8 << 21 else 8)
    headroom = 128 * 1024 * 2
    while headroom << 10 > dev and (chunk == 0 or headroom // 2 >= chunk * 2):
        headroom >>= 1
    offset = (24 + bm + headroom + 2047) // 2048 * 2048
    unit = 128 if level == 1 else chunk
    comp = (dev - offset) // unit * unit
    if level == 0:
        sectors = n * comp
    elif level == 1:
        sectors = comp
    elif level in (4, 5):
        sectors = (n - 1) * comp
    elif level == 6:
        sectors = (n - 2) * comp
    elif level == 10:
        layout = a.get("layout", "n2")
        copies = int(layout[1:])
        near, far = (copies, 1) if layout[0] == "n" else (1, copies)
        sectors = (comp // chunk // far * n // near) * chunk
    else:
        sys.exit("level %d not modelled" % level)
    return sectors * 512

print(array_bytes(""))
PY
}

# NBD members' stand-ins: nbds:// ones are served with TLS (a PSK) when
# nbdkit has it; an nbdkit without TLS gets them rewritten to plain
# nbd+unix:// instead.
psk=$T/keys.psk
echo "nbdraid:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$psk"
chmod 600 "$psk"
tls=no
nbdkit --dump-config | grep -q '^tls=yes' && tls=yes

declare -A names=()
for example in "$abs_top_srcdir"/conf/*.conf; do
  name=$(basename "$example" .conf)
  # The array's name ([array] name =, else the file's name) is its own.
  top=$(awk '/^[ \t]*\[/ { s = $0 }
             s ~ /^[ \t]*\[array\][ \t]*$/ && /^[ \t]*name[ \t]*=/ {
               sub(/^[^=]*=[ \t]*/, ""); sub(/[ \t]+#.*/, "");
               sub(/[ \t]+$/, ""); v = $0 }
             END { print v }' "$example")
  top=${top:-$name}
  [ -z "${names[$top]:-}" ] ||
    die "$name: array name '$top' is ${names[$top]}'s too"
  names[$top]=$name
  mkdir -p "$T/$name"
  # Point each member/spare at $T/NAME/mN.img, a 16 MiB sparse file; an
  # NBD member at $T/NAME/mN.sock, where mN.img is served (listed in
  # $T/NAME/serve: mN, and "tls" for nbds://).
  /usr/bin/python3 - "$example" "$T/$name" "$psk" "$tls" > "$T/$name/a.conf" <<'PY'
import re, sys
n = 0
serve = open(sys.argv[2] + "/serve", "w")
for line in open(sys.argv[1]):
    m = re.match(r"(\s*(?:member|spare)\s*=\s*)(?!array:|missing\b)(\S+)(.*)", line)
    if m:
        path = "%s/m%d.img" % (sys.argv[2], n)
        open(path, "wb").truncate(16 << 20)
        new = path
        uri = re.match(r"nbd(s?)(?:\+\w+)?://", m.group(2))
        if uri:
            sock = "%s/m%d.sock" % (sys.argv[2], n)
            if uri.group(1) and sys.argv[4] == "yes":
                new = "nbds+unix://nbdraid@/?socket=%s&tls-psk-file=%s" % (
                    sock, sys.argv[3])
                serve.write("m%d tls\n" % n)
            else:
                new = "nbd+unix:///?socket=%s" % sock
                serve.write("m%d\n" % n)
        line = m.group(1) + new + m.group(3) + "\n"
        n += 1
    sys.stdout.write(line)
    if line.strip() == "[array]":
        sys.stdout.write("socket = %s/ctl.sock\n" % sys.argv[2])
PY
  served=()
  mapfile -t lines < "$T/$name/serve"
  for line in ${lines[@]+"${lines[@]}"}; do
    m=${line%% *}
    if [ "$line" = "$m tls" ]; then
      start_member "$name/$m" "$T/$name/$m.img" --tls=require --tls-psk="$psk"
    else
      start_member "$name/$m" "$T/$name/$m.img"
    fi
    served+=("$name/$m")
  done
  expect=$(expected_bytes "$T/$name/a.conf") ||
    die "$name: the size model failed"
  missing=$(grep -Ec '^\s*member\s*=\s*missing\b' "$T/$name/a.conf" || :)
  "$NBDRAID" create --assume-clean "$T/$name/a.conf" 2>> "$T/create.log" ||
    die "$name: create failed: $(tail -1 "$T/create.log")"
  conf=$T/$name/a.conf
  start_server "$conf"
  size=$(export_size)
  status_is "sum(d['path'] == 'missing' for d in j['devices']) == $missing" ||
    die "$name: not $missing missing roles: $(status_json)"
  stop_server
  for m in ${served[@]+"${served[@]}"}; do kill_member "$m"; done
  [ "$size" = "$expect" ] ||
    die "$name: serves $size bytes; md would make it $expect"
  echo "ok: $name serves $size bytes${served[0]+ from ${#served[@]} NBD exports (TLS: $tls)}"
  rm -f "$T/$name"/*.img
done
