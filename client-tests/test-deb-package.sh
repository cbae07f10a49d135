#!/usr/bin/env bash
# The Debian package: dpkg-buildpackage -b builds nbdraid_VERSION_ARCH.deb
# from this tree's distribution (make distdir, so debian/ must be in
# it), away from the tree's own build; lintian finds no error in it; it
# holds the plugin in nbdkit's plugin directory, nbdraid, the man pages,
# the systemd units naming the installed paths and the example configs;
# and, unpacked, its nbdraid creates an array that nbdkit serves with
# its plugin.  It compiles the package once (about half a minute on two
# cores); the package's own unit tests are left to the suite (nocheck).
. "$(dirname "$0")/lib.sh"
requires_root
requires dpkg-buildpackage
requires dh
requires lintian
requires nbdkit
requires nbdsh

version=$(sed -n 's/^VERSION = //p' "$abs_top_builddir/Makefile")
arch=$(dpkg --print-architecture)
plugindir=$(pkg-config --variable=plugindir nbdkit)
[ -n "$version" ] && [ -n "$plugindir" ] ||
  die "no VERSION in $abs_top_builddir/Makefile, or no nbdkit plugindir"
src=$T/build/nbdraid-$version
deb=$T/build/nbdraid_${version}_$arch.deb

# The make running this test passes its jobserver and variables (TESTS)
# in MAKEFLAGS: neither is for these makes.
unset MAKEFLAGS MFLAGS MAKELEVEL
mkdir -p "$T/build"
make -s -C "$abs_top_builddir" distdir distdir="$src" > "$T/dist.log" 2>&1 ||
  die "make distdir: $(tail -20 "$T/dist.log")"
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=2" \
   dpkg-buildpackage -b -us -uc) > "$T/build.log" 2>&1 ||
  die "dpkg-buildpackage: $(tail -40 "$T/build.log")"
[ -f "$deb" ] || die "no $deb: $(ls "$T/build")"
echo "ok: dpkg-buildpackage built $(basename "$deb")"

# Errors fail; warnings are listed.
lintian "$T/build/nbdraid_${version}_$arch.changes" > "$T/lintian.out" 2>&1 || :
! grep '^E:' "$T/lintian.out" || die "lintian found errors"
echo "ok: lintian: no errors; $(grep -c '^W:' "$T/lintian.out") warnings"
grep '^W:' "$T/lintian.out" || :

# What it holds.
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's#^\./#/#' > "$T/contents"
for f in "$plugindir/nbdkit-raid-plugin.so" /usr/bin/nbdraid \
         /usr/share/man/man1/nbdkit-raid-plugin.1.gz \
         /usr/share/man/man8/nbdraid.8.gz \
         /lib/systemd/system/nbdraid@.service \
         /lib/systemd/system/nbdraid-check@.service \
         /lib/systemd/system/nbdraid-check@.timer \
         /lib/systemd/system/nbdraid-monitor@.service \
         /usr/share/doc/nbdraid/copyright; do
  grep -qx "$f" "$T/contents" || die "the package has no $f"
done
for c in "$abs_top_srcdir"/conf/*.conf; do
  grep -qx "/usr/share/doc/nbdraid/examples/$(basename "$c")" "$T/contents" ||
    die "the package has no example $(basename "$c")"
done
! grep '\.la$' "$T/contents" || die "the package holds libtool archives"
echo "ok: the plugin, nbdraid, the man pages, the units and the examples"

# Unpacked: the units name the installed files, and they work.
root=$T/root
dpkg -x "$deb" "$root"
grep -qx "ExecStart=/usr/bin/nbdkit --threads=64 -U /run/nbdraid/%i.nbd -P /run/nbdraid/%i.pid $plugindir/nbdkit-raid-plugin.so /etc/nbdraid/%i.conf degraded-after=30s" \
  "$root/lib/systemd/system/nbdraid@.service" ||
  die "nbdraid@.service does not start the installed plugin: $(grep Exec "$root/lib/systemd/system/nbdraid@.service")"
grep -q '^ExecStart=/usr/bin/nbdraid check ' \
  "$root/lib/systemd/system/nbdraid-check@.service" ||
  die "nbdraid-check@.service does not run the installed nbdraid"

make_members "$T/disks" 4 32M
write_config "$T/disks/a.conf" 6 left-symmetric 64K \
  $(member_paths "$T/disks" 4)
"$root/usr/bin/nbdraid" create --assume-clean "$T/disks/a.conf" \
  > /dev/null 2>> "$T/create.log" ||
  die "the package's nbdraid create: $(cat "$T/create.log")"
PLUGIN=$root$plugindir/nbdkit-raid-plugin.so
start_server "$T/disks/a.conf"
random_file "$T/piece" $((1024 * 1024))
nbdsh -u "$uri" -c "h.pwrite(open('$T/piece', 'rb').read(), 3 << 20)" \
  -c 'h.flush()' || die "write through the package's plugin failed"
nbdsh -u "$uri" \
  -c "import sys; sys.stdout.buffer.write(h.pread(1 << 20, 3 << 20))" \
  > "$T/back" || die "read through the package's plugin failed"
cmp "$T/piece" "$T/back" || die "the package's plugin read back other bytes"
"$root/usr/bin/nbdraid" status "$T/disks/a.conf" > /dev/null ||
  die "the package's nbdraid status failed"
stop_server
echo "ok: the unpacked nbdraid and plugin create and serve a RAID6"
