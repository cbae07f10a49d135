#!/usr/bin/env bash
# degraded-after=DURATION, mdadm's last resort: an array short of a
# member it can do without waits for it, then starts degraded, says so
# and raises DegradedArray; a member that turns up in time is used and
# the array starts whole; an array that could not start even degraded,
# or a config error, fails at once, without waiting.
. "$(dirname "$0")/lib.sh"
requires nbdkit
requires nbdsh

new_array r5 5 left-symmetric 64K 3 8M --assume-clean
random_file "$T/data" "$((2 * 8 * 1024 * 1024 - 2 * 1024 * 1024))"
start_server "$conf"
nbdcopy "$T/data" "$uri"
stop_server
rm -f "$sock" "$T/nbdkit.pid"

# The member never comes: degraded after the wait.
mv "$T/r5/d2.img" "$T/away.img"
t0=$SECONDS
start_server "$conf" degraded-after=3s
took=$((SECONDS - t0))
[ "$took" -ge 3 ] || die "started after $took s, before the 3 s wait"
grep -q "warning: array test: started degraded after waiting 3 s: array test: 1 member is missing: $T/r5/d2.img" \
  "$T/nbdkit.log" || die "no warning: $(cat "$T/nbdkit.log")"
status_is "j['state'] == 'degraded'" || die "$(status_json)"
grep -q "DegradedArray" <<< "$("$NBDRAID" monitor "$conf" --oneshot)" ||
  die "no DegradedArray"
nbdcopy "$uri" "$T/back" && cmp "$T/data" "$T/back" || die "data lost"
stop_server
rm -f "$sock" "$T/nbdkit.pid"

# It comes back within the wait: the array starts whole.  (A fresh
# copy: the degraded start above made d2 stale.)
new_array r5b 5 left-symmetric 64K 3 8M --assume-clean
mv "$T/r5b/d1.img" "$T/away-b.img"
(sleep 2; mv "$T/away-b.img" "$T/r5b/d1.img") &
: > "$T/nbdkit.log"
t0=$SECONDS
start_server "$conf" degraded-after=60s
took=$((SECONDS - t0))
[ "$took" -lt 30 ] || die "waited $took s for a member that came back"
status_is "j['state'] == 'active' and j['working'] == 3" ||
  die "not whole: $(status_json)"
grep -q "started degraded" "$T/nbdkit.log" && die "started degraded"
stop_server
rm -f "$sock" "$T/nbdkit.pid"

# Two of three gone: it could never start; no wait.
mv "$T/r5b/d0.img" "$T/r5b/d1.img" "$T/"
t0=$SECONDS
if nbdkit -U "$(new_socket)" "$PLUGIN" "$conf" degraded-after=60s 2> "$T/err"; then
  die "started without two members"
fi
[ $((SECONDS - t0)) -lt 30 ] || die "waited for an array that cannot start"
grep -q "cannot start: 2 of 3 members unavailable" "$T/err" || die "$(cat "$T/err")"
if nbdkit -U "$(new_socket)" "$PLUGIN" "$conf" degraded-after=soon 2> "$T/err"; then
  die "degraded-after=soon accepted"
fi
grep -q "degraded-after=soon: not a duration" "$T/err" || die "$(cat "$T/err")"
echo "ok: last resort waited, started degraded; a member in time was used"
