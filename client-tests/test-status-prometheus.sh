#!/usr/bin/env bash
# nbdraid status --prometheus prints metrics a strict parser of
# Prometheus's text format 0.0.4 accepts (every line a comment or a
# sample, a family's HELP and TYPE before its samples, each family in
# one group, no series twice, label values escaped), and its numbers
# are status --json's: a RAID5 whose name and member paths hold a quote
# and a backslash, healthy, after a check found a wrong chunk and after
# nbdraid fail; and each array of a RAID50, a member of one group
# failed.  The request counters move by at least the reads, writes and
# zeroes done through NBD, in the nested arrays too.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh

cat > "$T/prom.py" <<'PY'
"""Parse Prometheus text format 0.0.4 strictly, compare with status
--json, check counters moved.

  prom.py compare PROM JSON      every array and member as JSON says
  prom.py get PROM NAME [L=V...] the value of one series
  prom.py moved BEFORE AFTER ARRAY reads=N read_bytes=N ...
                                 each counter grew by at least N
"""
import json
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
VALUE = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?|NaN|[-+]Inf")
TYPES = {"counter", "gauge", "summary", "histogram", "untyped"}
ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}


def fail(n, line, why):
    sys.exit(f"line {n}: {why}: {line!r}")


def labels(n, line, s, i):
    """The labels from s[i] (after '{') to '}': (dict, index after)."""
    out = {}
    while True:
        m = LABEL.match(s, i)
        if not m or s[m.end():m.end() + 2] != '="':
            fail(n, line, "bad label name or no =\"")
        name, i, value = m.group(), m.end() + 2, ""
        while True:
            if i >= len(s):
                fail(n, line, "unterminated label value")
            c = s[i]
            if c == "\\":
                if s[i + 1:i + 2] not in ESCAPES:
                    fail(n, line, "bad escape in a label value")
                value += ESCAPES[s[i + 1]]
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                fail(n, line, "raw newline in a label value")
            else:
                value += c
                i += 1
        if name in out:
            fail(n, line, f"label {name} twice")
        out[name] = value
        if s[i:i + 1] == "}":
            return out, i + 1
        if s[i:i + 1] != ",":
            fail(n, line, "expected , or } after a label")
        i += 1


def parse(path):
    """{(name, ((label, value), ...)): float} and {family: type}."""
    text = open(path, encoding="utf-8").read()
    if not text.endswith("\n"):
        sys.exit(f"{path}: does not end with a newline")
    types, helps, samples = {}, set(), {}
    current, done = None, set()
    for n, line in enumerate(text[:-1].split("\n"), 1):
        if line.startswith("#"):
            words = line.split(" ", 3)
            if len(words) >= 3 and words[1] in ("HELP", "TYPE"):
                fam = words[2]
                if not NAME.fullmatch(fam):
                    fail(n, line, "bad metric name")
                if fam in done or fam == current:
                    fail(n, line, f"{words[1]} after {fam}'s samples")
                if words[1] == "HELP":
                    if fam in helps or len(words) < 4:
                        fail(n, line, "HELP twice or empty")
                    helps.add(fam)
                else:
                    if fam in types or len(words) != 4 or words[3] not in TYPES:
                        fail(n, line, "TYPE twice or unknown")
                    types[fam] = words[3]
            continue
        m = NAME.match(line)
        if not m:
            fail(n, line, "neither a comment nor a sample")
        name, i, lab = m.group(), m.end(), {}
        if line[i:i + 1] == "{":
            lab, i = labels(n, line, line, i + 1)
        rest = line[i:].split(" ")
        if rest[0] != "" or len(rest) not in (2, 3) or not VALUE.fullmatch(rest[1]):
            fail(n, line, "bad value")
        fam = name
        if fam not in types:
            for suffix in ("_sum", "_count", "_bucket"):
                base = name[:-len(suffix)]
                if name.endswith(suffix) and types.get(base) in (
                        "summary", "histogram"):
                    fam = base
        if fam not in types:
            fail(n, line, "sample before its family's TYPE")
        if fam not in helps:
            fail(n, line, "sample of a family without HELP")
        if types[fam] == "counter" and not fam.endswith("_total"):
            fail(n, line, "a counter not named ..._total")
        if fam != current:
            if fam in done:
                fail(n, line, f"{fam}'s samples are not in one group")
            if current:
                done.add(current)
            current = fam
        key = (name, tuple(sorted(lab.items())))
        if key in samples:
            fail(n, line, "the same series twice")
        samples[key] = float(rest[1])
    return samples, types


def series(samples, name):
    """{labels as a dict's items, frozen: value} of one metric name."""
    return {frozenset(k[1]): v for k, v in samples.items() if k[0] == name}


def get(samples, name, **lab):
    key = (name, tuple(sorted(lab.items())))
    if key not in samples:
        sys.exit(f"no series {name}{lab}")
    return samples[key]


def arrays(j):
    """The status tree's arrays, the top first."""
    yield j
    for a in j.get("arrays", []):
        yield from arrays(a)


def compare(prom, status):
    samples, _ = parse(prom)
    tree = list(arrays(json.load(open(status))))
    names = {dict(k)["array"] for k in series(samples, "nbdraid_array_info")}
    if names != {a["name"] for a in tree}:
        sys.exit(f"arrays {names}, status has {[a['name'] for a in tree]}")
    for a in tree:
        name, devices = a["name"], a["devices"]

        def val(metric, **lab):
            return get(samples, metric, array=name, **lab)

        want = {
            "nbdraid_array_up": not a["failed"],
            "nbdraid_array_failed": a["failed"],
            "nbdraid_array_degraded": a["state"].startswith("degraded"),
            "nbdraid_array_in_sync": a["synced"],
            "nbdraid_array_readonly": a["readonly"],
            "nbdraid_array_members": a["members"],
            "nbdraid_array_working_members": a["working"],
            "nbdraid_array_failed_members":
                sum(d["state"] == "faulty" for d in devices),
            "nbdraid_array_spares": sum(d["state"] == "spare" for d in devices),
            "nbdraid_array_shared_spares": len(a.get("shared_spares", [])),
            "nbdraid_array_size_bytes": a["array_bytes"],
            "nbdraid_job_speed_bytes_per_second":
                a["job"]["speed_bytes_per_sec"],
            "nbdraid_check_mismatched_sectors": a["mismatches"],
            "nbdraid_check_unlocated_sectors": a["unlocated"],
            "nbdraid_bitmap_chunks": a["bitmap"]["chunks"],
            "nbdraid_reads_total": a["requests"]["reads"],
            "nbdraid_read_bytes_total": a["requests"]["read_bytes"],
            "nbdraid_writes_total": a["requests"]["writes"],
            "nbdraid_written_bytes_total": a["requests"]["write_bytes"],
            "nbdraid_zeroes_total": a["requests"]["zeroes"],
            "nbdraid_zeroed_bytes_total": a["requests"]["zero_bytes"],
            "nbdraid_failed_requests_total": a["requests"]["failed"],
            "nbdraid_write_behind_limit": a["write_behind"]["limit"],
            "nbdraid_write_behind_outstanding_writes":
                a["write_behind"]["outstanding"],
            "nbdraid_write_behind_slots": a["write_behind"]["slots"],
            "nbdraid_journal_bytes": a.get("journal", {}).get("bytes", 0),
            "nbdraid_journal_used_bytes":
                a.get("journal", {}).get("used_bytes", 0),
            "nbdraid_journal_failed":
                a.get("journal", {}).get("state", "active") != "active",
            "nbdraid_request_duration_seconds_count":
                a["requests"]["reads"] + a["requests"]["writes"] +
                a["requests"]["zeroes"],
        }
        for metric, v in want.items():
            if val(metric) != float(v):
                sys.exit(f"{name}: {metric} is {val(metric)}, status says {v}")
        if abs(val("nbdraid_request_duration_seconds_sum") -
               a["requests"]["busy_ns"] / 1e9) > 1e-9:
            sys.exit(f"{name}: request seconds differ from busy_ns")
        if abs(val("nbdraid_job_progress_ratio") -
               a["job"]["percent"] / 100) > 0.001:
            sys.exit(f"{name}: job progress differs from {a['job']}")
        info = {k: v for k, v in next(
            iter(l for l in series(samples, "nbdraid_array_info")
                 if ("array", name) in l))}
        if (info["uuid"], info["level"], info["layout"]) != (
                a["uuid"], f"raid{a['level']}", a["layout"]):
            sys.exit(f"{name}: info {info}, status {a}")
        kinds = {dict(k)["kind"]: v for k, v in
                 series(samples, "nbdraid_job").items()
                 if ("array", name) in k}
        if {k for k, v in kinds.items() if v == 1} != {a["job"]["kind"]} or \
                sum(kinds.values()) != 1:
            sys.exit(f"{name}: job kinds {kinds}, status {a['job']}")
        got = {(dict(k)["device"], dict(k)["role"])
               for k in series(samples, "nbdraid_member_state")
               if ("array", name) in k}
        want_devices = {(d["path"], str(d["role"]) if d["role"] >= 0
                         else "none") for d in devices}
        if got != want_devices:
            sys.exit(f"{name}: devices {got}, status {want_devices}")
        for d in devices:
            lab = {"device": d["path"],
                   "role": str(d["role"]) if d["role"] >= 0 else "none"}
            for s in ("active", "recovering", "faulty", "missing", "spare",
                      "replacing"):
                if val("nbdraid_member_state", state=s, **lab) != \
                        (s == d["state"]):
                    sys.exit(f"{name}: {d['path']} state {s} wrong; "
                             f"status says {d['state']}")
            if val("nbdraid_member_corrected_reads_total", **lab) != \
                    d["corrected_reads"] or \
                    val("nbdraid_member_mismatched_sectors_total", **lab) != \
                    d["mismatched_sectors"] or \
                    val("nbdraid_member_detached", **lab) != d["detached"] or \
                    val("nbdraid_member_slow", **lab) != d["slow"] or \
                    abs(val("nbdraid_member_read_seconds", **lab) -
                        d["read_ns"] / 1e9) > 1e-9:
                sys.exit(f"{name}: {d['path']} counters differ from {d}")
    print(f"{len(samples)} series match status --json for "
          f"{', '.join(a['name'] for a in tree)}")


def moved(before, after, array, wants):
    b, _ = parse(before)
    a, _ = parse(after)
    for w in wants:
        what, least = w.split("=")
        metric = {"reads": "nbdraid_reads_total",
                  "read_bytes": "nbdraid_read_bytes_total",
                  "writes": "nbdraid_writes_total",
                  "write_bytes": "nbdraid_written_bytes_total",
                  "zeroes": "nbdraid_zeroes_total",
                  "zero_bytes": "nbdraid_zeroed_bytes_total",
                  "requests": "nbdraid_request_duration_seconds_count",
                  "seconds": "nbdraid_request_duration_seconds_sum"}[what]
        grew = get(a, metric, array=array) - get(b, metric, array=array)
        if grew < float(least):
            sys.exit(f"{array}: {metric} grew by {grew}, not {least}")
    if get(a, "nbdraid_failed_requests_total", array=array) != \
            get(b, "nbdraid_failed_requests_total", array=array):
        sys.exit(f"{array}: requests failed")


if sys.argv[1] == "compare":
    compare(sys.argv[2], sys.argv[3])
elif sys.argv[1] == "get":
    samples, _ = parse(sys.argv[2])
    v = get(samples, sys.argv[3], **dict(x.split("=", 1) for x in sys.argv[4:]))
    print(int(v) if v == int(v) else v)
else:
    moved(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
PY
prom () { /usr/bin/python3 "$T/prom.py" "$@"; }

# snapshot NAME: $T/NAME.prom and $T/NAME.json, the metrics and status
# --json, taken once every array is marked clean: until then a nested
# array's counters still move, as the array above it writes its
# superblocks through it.
snapshot () {
  wait_status 30 "all(a['clean'] for a in [j] + j.get('arrays', []))"
  "$NBDRAID" status "$conf" --prometheus > "$T/$1.prom" ||
    die "status --prometheus failed"
  status_json > "$T/$1.json"
}

# matches NAME: the metrics of snapshot NAME are its status --json's
matches () {
  prom compare "$T/$1.prom" "$T/$1.json" ||
    die "$1: metrics and status --json differ: $(cat "$T/$1.prom")"
}

# RAID5, its name and paths holding what label values escape.
name='r5"q\b'
dir=$T/'r5"dir\x'
make_members "$dir" 4 16M
write_config "$T/r5.conf" 5 left-symmetric 64K "$dir/d0.img" "$dir/d1.img" \
  "$dir/d2.img" "$dir/d3.img"
sed -i "s/^name = test\$/name = ${name//\\/\\\\}/" "$T/r5.conf"
conf=$T/r5.conf
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create failed: $(cat "$T/create.log")"
start_server "$conf"
snapshot healthy
matches healthy
grep -qF 'array="r5\"q\\b"' "$T/healthy.prom" ||
  die "array label not escaped: $(grep -m1 array_info "$T/healthy.prom")"
if out=$("$NBDRAID" status "$conf" --json --prometheus 2>&1); then
  die "status --json --prometheus was answered: $out"
fi
grep -q "not both" <<< "$out" || die "status --json --prometheus: $out"

# Reads, writes and a zero through NBD: 2 writes of 1114112 bytes, 2
# reads of 1052672, one zero of 1 MiB.
nbdsh -u "$uri" -c '
import os
data = os.urandom(1 << 20)
h.pwrite(data, 0)
h.pwrite(b"\x5a" * 65536, 5 << 20)
assert h.pread(1 << 20, 0) == data
assert h.pread(4096, 5 << 20) == b"\x5a" * 4096
h.zero(1 << 20, 8 << 20)
' || die "I/O through NBD failed"
snapshot io
matches io
prom moved "$T/healthy.prom" "$T/io.prom" "$name" reads=2 read_bytes=1052672 \
  writes=2 write_bytes=1114112 zeroes=1 zero_bytes=1048576 requests=5 \
  seconds=0.000000001 || die "counters: $(grep _total "$T/io.prom")"
echo "ok: RAID5 metrics match status --json; counters moved by the I/O"

# A wrong chunk on member 1 (written data there), found by a check
# (RAID5 cannot say which member: unlocated); then a member failed.
off=$(/usr/bin/python3 -c '
import struct, sys
with open(sys.argv[1], "rb") as f:
    f.seek(4096 + 128)
    print(struct.unpack("<Q", f.read(8))[0] * 512 + 4096)' "$dir/d1.img")
printf 'wrong bytes' | dd of="$dir/d1.img" bs=1 seek="$off" conv=notrunc \
  status=none
"$NBDRAID" check "$conf" > /dev/null || die "check refused"
timeout 60 "$NBDRAID" wait "$conf" || die "nbdraid wait failed"
"$NBDRAID" fail "$conf" 2 > /dev/null || die "fail refused"
snapshot failed
matches failed
for want in nbdraid_array_degraded=1 nbdraid_array_up=1 \
            nbdraid_array_failed_members=1 nbdraid_array_working_members=3; do
  [ "$(prom get "$T/failed.prom" "${want%=*}" array="$name")" = "${want#*=}" ] ||
    die "after fail: ${want%=*} is not ${want#*=}: $(cat "$T/failed.prom")"
done
[ "$(prom get "$T/failed.prom" nbdraid_member_state array="$name" \
      device="$dir/d2.img" role=2 state=faulty)" = 1 ] ||
  die "member 2 not faulty: $(grep member_state "$T/failed.prom")"
[ "$(prom get "$T/failed.prom" nbdraid_check_unlocated_sectors array="$name")" -gt 0 ] ||
  die "the check found nothing: $(grep check_ "$T/failed.prom")"
stop_server
echo "ok: RAID5 after a check and a failure: degraded, mismatches, as status --json"

# RAID50: RAID0 over RAID5 groups g0 and g1, each with its own series.
d=$T/n
mkdir -p "$d"
{
  printf '[array]\nname = top\nsocket = %s\nlevel = 0\nchunk = 64K\n' \
    "$d/top.sock"
  printf '[members]\nmember = array:g0\nmember = array:g1\n'
  for g in 0 1; do
    printf '[array g%s]\nlevel = 5\nchunk = 32K\n[members g%s]\n' "$g" "$g"
    for i in 0 1 2; do
      truncate -s 16M "$d/g$g-d$i.img"
      echo "member = $d/g$g-d$i.img"
    done
  done
} > "$d/top.conf"
conf=$d/top.conf
"$NBDRAID" create --assume-clean "$conf" 2>> "$T/create.log" ||
  die "create RAID50 failed: $(cat "$T/create.log")"
start_server "$conf"
snapshot nested0
matches nested0
nbdsh -u "$uri" -c '
import os
data = os.urandom(2 << 20)
h.pwrite(data, 0)
assert h.pread(2 << 20, 0) == data
' || die "I/O through NBD to the RAID50 failed"
snapshot nested1
matches nested1
prom moved "$T/nested0.prom" "$T/nested1.prom" top reads=1 writes=1 \
  read_bytes=2097152 write_bytes=2097152 || die "top's counters"
for g in g0 g1; do
  prom moved "$T/nested0.prom" "$T/nested1.prom" $g reads=1 writes=1 \
    read_bytes=1048576 write_bytes=1048576 || die "$g's counters"
done
"$NBDRAID" fail "$conf" "$d/g1-d0.img" > /dev/null || die "fail in g1 refused"
snapshot nested2
matches nested2
[ "$(prom get "$T/nested2.prom" nbdraid_array_degraded array=g1)" = 1 ] &&
  [ "$(prom get "$T/nested2.prom" nbdraid_array_degraded array=top)" = 0 ] ||
  die "g1 should be degraded, top not: $(grep degraded "$T/nested2.prom")"
# --array NAME: that array's metrics alone.
"$NBDRAID" status "$conf" --prometheus --array g0 > "$T/g0.prom"
[ "$(grep -c '^nbdraid_array_info{' "$T/g0.prom")" = 1 ] &&
  grep -q '^nbdraid_array_info{array="g0"' "$T/g0.prom" ||
  die "--array g0: $(grep array_info "$T/g0.prom")"
stop_server
echo "ok: RAID50: top, g0 and g1 each match status --json; g1 degraded"
