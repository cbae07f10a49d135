#!/usr/bin/env bash
# The documentation says what the code does:
#  (a) every verb `nbdraid --help` lists is an =item of nbdraid.pod;
#  (b) every config key the parser in raid/format/config-file.c accepts
#      is an =item of nbdkit-raid-plugin.pod;
#  (c) the README's command blocks (```sh) run, in order, in a scratch
#      directory: the paths they use (/etc/nbdraid, /srv/disks,
#      /run/nbdraid, /var/lib/nbdraid) are moved under $T/root.  A block
#      whose first line is "# needs: ..." needs what a scratch directory
#      cannot give (a real disk, a kernel module, systemd) and is
#      skipped.
# Both man pages must also pass podchecker.
. "$(dirname "$0")/lib.sh"
requires podchecker
requires nbdkit
requires nbdinfo

readme=$abs_top_srcdir/README.md
cli_pod=$abs_top_srcdir/server/cli/nbdraid.pod
plugin_pod=$abs_top_srcdir/plugins/raid/nbdkit-raid-plugin.pod
parser=$abs_top_srcdir/raid/format/config-file.c

for pod in "$cli_pod" "$plugin_pod"; do
  podchecker "$pod" > "$T/podchecker.out" 2>&1 ||
    die "podchecker $pod: $(cat "$T/podchecker.out")"
done
echo "ok: podchecker passes both man pages"

# (a) The verbs, from the usage nbdraid prints: "  nbdraid VERB ...".
verbs=$("$NBDRAID" --help | sed -n 's/^  nbdraid \([a-z-]*\).*/\1/p')
[ "$(echo "$verbs" | wc -w)" -ge 10 ] ||
  die "found only '$verbs' in nbdraid --help (has its usage changed shape?)"
for verb in $verbs; do
  grep -q "^=item B<$verb>" "$cli_pod" ||
    die "nbdraid --help lists $verb, but nbdraid.pod has no =item B<$verb>"
done
echo "ok: nbdraid.pod documents every verb:" $verbs

# (b) The keys, from the parser's comparisons: strcmp (name, "KEY").
keys=$(grep -o 'strcmp (name, "[^"]*")' "$parser" |
       sed 's/strcmp (name, "\(.*\)")/\1/' | sort -u)
for key in level member spare; do
  grep -qx "$key" <<<"$keys" ||
    die "found no key '$key' in $parser (has the parser changed shape?)"
done
for key in $keys; do
  grep -q "^=item .*B<$key =>" "$plugin_pod" ||
    die "$parser accepts the key '$key', but nbdkit-raid-plugin.pod has" \
        "no =item B<$key => for it"
done
# The member lines' options: strncmp (tok, "OPTION=", N).
for opt in $(grep -o 'strncmp (tok, "[^"]*="' "$parser" |
             sed 's/strncmp (tok, "\(.*\)"/\1/'); do
  grep -q "^=item .*B<$opt>" "$plugin_pod" ||
    die "$parser accepts the member option '$opt', but" \
        "nbdkit-raid-plugin.pod documents it in no =item"
done
echo "ok: nbdkit-raid-plugin.pod documents every config key:" $keys

# (c) The README's blocks.  nbdkit finds an installed plugin by its
# name; this build's is not installed, so a wrapper named nbdkit, first
# on PATH, passes its path where a command says "raid".
mkdir -p "$T/bin" "$T/root"
cat > "$T/bin/nbdkit" <<EOF
#!/usr/bin/env bash
args=()
for a in "\$@"; do
  if [ "\$a" = raid ]; then args+=("$PLUGIN"); else args+=("\$a"); fi
done
exec $(command -v nbdkit) "\${args[@]}"
EOF
chmod +x "$T/bin/nbdkit"

# Servers the blocks start write their pid files in /run/nbdraid; stop
# those still running at the end (those of this test only).
stop_readme_servers () {
  local f pid
  for f in "$T"/root/run/nbdraid/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    if grep -qF "$T/root" "/proc/$pid/cmdline" 2>/dev/null; then
      kill "$pid"
      wait_for 10 sh -c "! kill -0 $pid 2>/dev/null" || kill -9 "$pid"
    fi
  done
}
cleanup_fn stop_readme_servers

# Split the README into its ```sh blocks, $T/blocks/NN.sh, each with
# the heading it is under in NN.title.
mkdir "$T/blocks"
awk -v dir="$T/blocks" '
  /^```/ && !fence { fence = 1; if ($0 == "```sh") { n++; out = sprintf("%s/%02d", dir, n); print title > (out ".title"); close(out ".title") } ; next }
  /^```/ && fence { fence = 0; out = ""; next }
  fence && out != "" { print > (out ".sh"); next }
  !fence && /^#/ { title = $0 }
' "$readme"

ran=0 skipped=0
for block in "$T"/blocks/*.sh; do
  n=$(basename "$block" .sh)
  title=$(cat "$T/blocks/$n.title")
  if head -1 "$block" | grep -q '^# needs:'; then
    echo "skip: block $n under '$title': $(head -1 "$block")"
    skipped=$((skipped + 1))
    continue
  fi
  sed -e "s#/etc/nbdraid#$T/root/etc/nbdraid#g" \
      -e "s#/srv/disks#$T/root/srv/disks#g" \
      -e "s#/run/nbdraid#$T/root/run/nbdraid#g" \
      -e "s#/var/lib/nbdraid#$T/root/var/lib/nbdraid#g" \
      "$block" > "$T/run.sh"
  if ! (cd "$T/root" &&
        PATH=$T/bin:$abs_top_builddir/server/cli:$PATH \
        bash -e -o pipefail "$T/run.sh") > "$T/block.out" 2>&1; then
    sed 's/^/    /' "$T/run.sh" >&2
    echo "  output:" >&2
    sed 's/^/    /' "$T/block.out" >&2
    die "README block $n under '$title' failed"
  fi
  echo "ok: block $n under '$title' ran:"
  sed 's/^/    /' "$T/block.out"
  ran=$((ran + 1))
done
[ "$ran" -ge 5 ] || die "only $ran README blocks ran (are they still \`\`\`sh?)"
echo "ok: $ran README blocks ran, $skipped need what a scratch directory lacks"
