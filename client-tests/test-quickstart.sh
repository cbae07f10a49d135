#!/usr/bin/env bash
# ./quickstart builds, creates the demo RAID6 and serves it; a second run
# reuses the array (same UUID) instead of creating it again.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdinfo

export NBDRAID_DEMO_DIR=$T/demo
export NBDRAID_DEMO_PORT=$((20000 + RANDOM % 20000))
"$abs_top_srcdir/quickstart" --run 'nbdinfo --size "$uri" > '"$T/size" \
  > "$T/qs.out" 2>&1 || die "quickstart failed: $(tail "$T/qs.out")"
grep -q "nbdinfo nbd://127.0.0.1:$NBDRAID_DEMO_PORT" "$T/qs.out" ||
  die "no client commands printed"
# RAID6 of six 1 GiB members: four members' worth of data.
[ "$(cat "$T/size")" -gt $((4 * 1000 * 1024 * 1024)) ] || die "size $(cat "$T/size")"
uuid=$("$NBDRAID" examine --json "$T/demo/d0.img" | sed -n 's/.*"uuid": "\([^"]*\)".*/\1/p')
"$abs_top_srcdir/quickstart" --run true > "$T/qs2.out" 2>&1 || die "second run failed"
uuid2=$("$NBDRAID" examine --json "$T/demo/d0.img" | sed -n 's/.*"uuid": "\([^"]*\)".*/\1/p')
[ -n "$uuid" ] && [ "$uuid" = "$uuid2" ] || die "demo array was recreated"
echo "ok: quickstart serves and reuses the demo"
