#!/usr/bin/env bash
# Under a systemd unit running nbdkit -f, stderr is the journal:
# systemd names it in JOURNAL_STREAM, and the plugin starts each of its
# info and warning lines with the syslog priority ("<6>", "<4>") that
# journald takes as the line's level.  Anywhere else the lines are
# plain.
. "$(dirname "$0")/lib.sh"
requires nbdkit

new_array r5 5 left-symmetric 64K 3 8M --assume-clean
truncate -s 8M "$T/spare.img"
mv "$T/r5/d2.img" "$T/away.img"
: > "$T/nbdkit.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/nbdkit.log") start_server "$conf" \
  degraded=true
"$NBDRAID" add "$conf" "$T/spare.img" > /dev/null || die "add refused"
"$NBDRAID" wait "$conf"
"$NBDRAID" fail "$conf" 0 > /dev/null || die "fail refused"
stop_server
grep -q '^<4>nbdkit: raid: warning: array test: ' "$T/nbdkit.log" ||
  die "no <4> warning: $(cat "$T/nbdkit.log")"
grep -q '^<6>nbdkit: raid: info: array test: recovery .* finished' "$T/nbdkit.log" ||
  die "no <6> info: $(cat "$T/nbdkit.log")"
grep -q '^<3>nbdkit: raid: error: array test: member 0 .* failed' "$T/nbdkit.log" ||
  die "no <3> error: $(cat "$T/nbdkit.log")"
grep -q '^nbdkit' "$T/nbdkit.log" &&
  die "a line without its level: $(cat "$T/nbdkit.log")"

# Not the journal (another stream named): plain lines.
: > "$T/nbdkit.log"
JOURNAL_STREAM=1:1 start_server "$conf"
stop_server
grep -q '^nbdkit: raid: warning: array test: ' "$T/nbdkit.log" ||
  die "no plain warning: $(cat "$T/nbdkit.log")"
grep -q '^<' "$T/nbdkit.log" && die "a prefix off the journal"
echo "ok: journal lines carry their level; others are plain"
