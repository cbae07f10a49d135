# nbdraid client tests: what the grow bad-input tests share.  Source
# after lib.sh, and define signature, what a refusal must not change:
#   . "$abs_top_srcdir/client-tests/lib/grow-refusals.sh"
#   signature () { superblock_fields level events; cat "$conf"; }

# expect_refusal DESCRIPTION EXPECTED-TEXT nbdraid-args...: nbdraid
# exits non-zero with exactly that one line, and signature says the
# same before and after.
expect_refusal () {
  local what=$1 want=$2 out before
  shift 2
  before=$(signature)
  if out=$("$NBDRAID" "$@" 2>&1); then die "$what: accepted: $out"; fi
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || die "$what: not one line: $out"
  [ "$out" = "$want" ] || die "$what: expected '$want', got: $out"
  [ "$(signature)" = "$before" ] || die "$what: the array changed"
  echo "ok: $what: $out"
}

# nested_arrays: a RAID0 "top" over two RAID1 groups g0 and g1 of two
# 20M members each, in $T/n, created; $conf is its config, $members
# empty (the groups' members are not in md's layout of one array).
nested_arrays () {
  local g i
  mkdir -p "$T/n"
  {
    printf '[array]\nname = top\nsocket = %s\nlevel = 0\nchunk = 64K\n' "$T/n/top.sock"
    printf '[members]\nmember = array:g0\nmember = array:g1\n'
    for g in 0 1; do
      printf '[array g%s]\nlevel = 1\n[members g%s]\n' "$g" "$g"
      for i in 0 1; do
        truncate -s 20M "$T/n/g$g-d$i.img"
        echo "member = g$g-d$i.img"
      done
    done
  } > "$T/n/top.conf"
  "$NBDRAID" create --assume-clean "$T/n/top.conf" 2>> "$T/create.log" ||
    die "nested create: $(tail -1 "$T/create.log")"
  conf=$T/n/top.conf members=""
}

# superblock_fields FIELD...: those fields of nbdraid examine --json,
# a line for each member in $members
superblock_fields () {
  local m
  for m in $members; do
    "$NBDRAID" examine --json "$m" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)[0]
print(*(j[f] for f in sys.argv[1:]))' "$@"
  done
}
