#!/usr/bin/env bash
# nbdraid create refuses bad configs and unusable members with one clear
# line naming the config file:line or the member path, exits non-zero,
# and writes nothing to any member.
. "$(dirname "$0")/lib.sh"

d=$T/m
mkdir -p "$d" "$d/adir"
for i in 0 1 2 3; do head -c 4M /dev/urandom > "$d/d$i.img"; done
truncate -s 1M "$d/tiny.img"
snapshot () { (cd "$d" && find . -name '*.img' -type f -print0 | sort -z | xargs -0 sha256sum); }
snapshot > "$T/before"

# expect_refusal DESCRIPTION EXPECTED-TEXT [create options] <<< config
expect_refusal () {
  local what=$1 want=$2 out
  shift 2
  cat > "$d/a.conf"
  if out=$("$NBDRAID" create "$@" "$d/a.conf" 2>&1); then
    die "$what: create succeeded"
  fi
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || die "$what: not one line: $out"
  case $out in
    *"$want"*) echo "ok: $what: $out" ;;
    *) die "$what: expected '$want', got: $out" ;;
  esac
  snapshot | cmp -s - "$T/before" || die "$what: a member was modified"
}

members="member = d0.img
member = d1.img
member = d2.img
member = d3.img"

expect_refusal "unknown key" "a.conf:3: unknown key 'colour'" <<EOF2
[array]
level = 5
colour = blue
[members]
$members
EOF2
expect_refusal "unknown section" "a.conf:3: unknown section [disks]" <<EOF2
[array]
level = 5
[disks]
member = d0.img
EOF2
expect_refusal "key outside a section" "a.conf:1: 'level' is outside any section" <<EOF2
level = 5
EOF2
expect_refusal "ppl on RAID6" "a.conf:3: consistency-policy ppl applies to RAID5, not to RAID6" <<EOF2
[array]
level = 6
consistency-policy = ppl
[members]
$members
EOF2
expect_refusal "ppl beside a bitmap" "a.conf:4: consistency-policy ppl excludes the bitmap that line 3 keeps" <<EOF2
[array]
level = 5
bitmap = internal
consistency-policy = ppl
[members]
$members
EOF2
expect_refusal "journal policy without a journal" "a.conf:3: consistency-policy journal needs a journal device" <<EOF2
[array]
level = 5
consistency-policy = journal
[members]
$members
EOF2
expect_refusal "journal without the policy" "a.conf:8: journal = $d/j.img needs consistency-policy = journal" <<EOF2
[array]
level = 5
[members]
$members
journal = j.img
EOF2
expect_refusal "journal on RAID1" "a.conf:3: consistency-policy journal applies to RAID4, RAID5 and RAID6, not to RAID1" <<EOF2
[array]
level = 1
consistency-policy = journal
[members]
member = d0.img
member = d1.img
journal = d2.img
EOF2
expect_refusal "journal beside a bitmap" "a.conf:4: consistency-policy journal excludes the bitmap that line 3 keeps" <<EOF2
[array]
level = 6
bitmap = internal
consistency-policy = journal
[members]
$members
journal = j.img
EOF2
expect_refusal "journal that is a member" "a.conf:9: $d/d3.img is listed twice: a journal cannot also be a member" <<EOF2
[array]
level = 5
consistency-policy = journal
[members]
$members
journal = d3.img
EOF2
expect_refusal "journal twice" "a.conf:10: journal is listed twice (line 9)" <<EOF2
[array]
level = 5
consistency-policy = journal
[members]
$members
journal = j.img
journal = tiny.img
EOF2
expect_refusal "journal mode without the journal" "a.conf:3: journal-mode needs consistency-policy = journal" <<EOF2
[array]
level = 5
journal-mode = write-back
[members]
$members
EOF2
expect_refusal "journal mode" "a.conf:4: journal-mode 'write-behind' is not write-through or write-back" <<EOF2
[array]
level = 5
consistency-policy = journal
journal-mode = write-behind
[members]
$members
journal = tiny.img
EOF2
expect_refusal "journal too small" "a.conf:9: journal $d/tiny.img is too small: 1048576 bytes; RAID5 of 4 members with 512K chunks needs at least" <<EOF2
[array]
level = 5
consistency-policy = journal
[members]
$members
journal = tiny.img
EOF2
expect_refusal "bad size" "a.conf:3: chunk '12Q' is not a size" <<EOF2
[array]
level = 5
chunk = 12Q
[members]
$members
EOF2
expect_refusal "chunk not a power of two" "a.conf:3: chunk 12288 must be a power of two" <<EOF2
[array]
level = 5
chunk = 12K
[members]
$members
EOF2
expect_refusal "chunk below 4K" "a.conf:3: chunk 2048 must be a power of two from 4K" <<EOF2
[array]
level = 6
chunk = 2K
[members]
$members
EOF2
expect_refusal "unknown level" "a.conf:2: level '3' is not one of 0, 1, 4, 5, 6, 10" <<EOF2
[array]
level = 3
[members]
$members
EOF2
expect_refusal "layout of another level" "a.conf:3: layout 'n2' is not a RAID5 layout" <<EOF2
[array]
level = 5
layout = n2
[members]
$members
EOF2
expect_refusal "layout on RAID0" "a.conf:3: layout does not apply to RAID0" <<EOF2
[array]
level = 0
layout = left-symmetric
[members]
$members
EOF2
expect_refusal "chunk on RAID1" "a.conf:3: chunk does not apply to RAID1" <<EOF2
[array]
level = 1
chunk = 64K
[members]
$members
EOF2
expect_refusal "RAID6 with 3 members" "a.conf:2: RAID6 left-symmetric needs at least 4 members; [members] lists 3" <<EOF2
[array]
level = 6
[members]
member = d0.img
member = d1.img
member = d2.img
EOF2
expect_refusal "RAID10 n2 with 1 member" "a.conf:2: RAID10 n2 needs at least 2 members; [members] lists 1" <<EOF2
[array]
level = 10
layout = n2
[members]
member = d0.img
EOF2
expect_refusal "RAID5 with 1 member" "a.conf:2: RAID5 left-symmetric needs at least 2 members; [members] lists 1" <<EOF2
[array]
level = 5
[members]
member = d0.img
EOF2
expect_refusal "same path twice" "a.conf:5: $d/./d0.img is listed twice" <<EOF2
[array]
level = 1
[members]
member = d0.img
member = ./d0.img
EOF2
ln "$d/d0.img" "$d/d0.link"
expect_refusal "one file under two names" "$d/d0.img and $d/d0.link are the same file" <<EOF2
[array]
level = 1
[members]
member = d0.img
member = d0.link
EOF2
rm "$d/d0.link"
expect_refusal "unknown member option" "a.conf:4: unknown member option 'ctrl=c0'" <<EOF2
[array]
level = 1
[members]
member = d0.img ctrl=c0
member = d1.img
EOF2
expect_refusal "write-behind out of md's range" "a.conf:4: write-behind '16384' is not a number from 0 to 16383" <<EOF2
[array]
level = 1
bitmap-chunk = 1M
write-behind = 16384
[members]
member = d0.img
member = d1.img write-mostly
EOF2
expect_refusal "write-behind without a bitmap" "a.conf:4: write-behind needs the write-intent bitmap" <<EOF2
[array]
level = 1
bitmap = none
write-behind = 256
[members]
member = d0.img
member = d1.img write-mostly
EOF2
expect_refusal "write-behind without write-mostly" "a.conf:3: write-behind needs a write-mostly member" <<EOF2
[array]
level = 1
write-behind =
[members]
member = d0.img
member = d1.img
EOF2
expect_refusal "write-behind on RAID10" "a.conf:4: write-behind applies to RAID1, not to RAID10" <<EOF2
[array]
level = 10
layout = n2
write-behind = 16
[members]
member = d0.img
member = d1.img write-mostly
member = d2.img
member = d3.img
EOF2
expect_refusal "missing member" "$d/nope.img: open: No such file or directory" <<EOF2
[array]
level = 1
[members]
member = d0.img
member = nope.img
EOF2
expect_refusal "unparsable member URI" "nbd://[bad:1/x: nbd_aio_connect_uri: unable to parse URI" <<EOF2
[array]
level = 1
[members]
member = d0.img
member = nbd://[bad:1/x
EOF2
expect_refusal "unreachable member URI" "nbd+unix:///?socket=$d/nosuch.sock: nbd_aio_connect_uri: connect: No such file or directory" <<EOF2
[array]
level = 1
[members]
member = d0.img
member = nbd+unix:///?socket=$d/nosuch.sock
EOF2
expect_refusal "directory as member" "$d/adir: open: Is a directory" <<EOF2
[array]
level = 1
[members]
member = d0.img
member = adir
EOF2
expect_refusal "member too small" "$d/tiny.img is too small: 1048576 bytes" <<EOF2
[array]
level = 5
chunk = 512K
[members]
member = d0.img
member = d1.img
member = tiny.img
EOF2

# A member that already holds an md superblock is refused without --force.
printf '[array]\nlevel = 1\n[members]\nmember = d2.img\nmember = d3.img\n' \
  > "$d/b.conf"
"$NBDRAID" create --assume-clean "$d/b.conf" 2> /dev/null
snapshot > "$T/before"
expect_refusal "existing superblock" "$d/d2.img already holds an md superblock" <<EOF2
[array]
level = 0
[members]
member = d1.img
member = d2.img
EOF2

# A member the user may not read (root reads everything: test as nobody).
if [ "$(id -u)" = 0 ] && command -v runuser > /dev/null; then
  chmod 755 "$T"
  chown -R nobody "$d"
  chmod 000 "$d/d1.img"
  snapshot > "$T/before"
  printf '[array]\nlevel = 1\n[members]\nmember = d0.img\nmember = d1.img\n' \
    > "$d/c.conf"
  chown nobody "$d/c.conf"
  # The build tree may sit where nobody cannot reach: use a copy.
  cp "$NBDRAID" "$T/nbdraid"
  if out=$(runuser -u nobody -- "$T/nbdraid" create "$d/c.conf" 2>&1); then
    die "unreadable member: create succeeded"
  fi
  case $out in
    *"$d/d1.img: open: Permission denied"*) echo "ok: unreadable: $out" ;;
    *) die "unreadable member: got: $out" ;;
  esac
  snapshot | cmp -s - "$T/before" || die "unreadable: a member was modified"
fi
