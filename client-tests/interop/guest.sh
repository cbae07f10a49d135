#!/usr/bin/env bash
# Boot a Linux guest (Debian's kernel under qemu TCG) with md, nbd-client
# and e2fsprogs, run a shell script in it and hand back its output and
# exit status.
#
#   guest.sh prepare
#       Install what the guest needs (as root, with apt-get) and build the
#       kernel and initramfs into the cache; exit 77 (with the reason) if
#       that is impossible or the guest does not boot.
#   guest.sh run [--disk NAME=FILE]... [--qemu ARG]... [--net]
#                [--timeout SECS] SCRIPT
#       Boot with each FILE as a virtio-scsi disk the guest sees as
#       /dev/disk/NAME (in order), any extra qemu arguments (such as a
#       -drive the guest sees as /dev/vda), user networking with --net
#       (guest 10.0.2.15, the host's loopback is 10.0.2.2), run SCRIPT
#       with busybox sh, print its output and exit with its status.
#       Exit 124 when the guest does not finish in SECS (default 600).
#
# The cache ($NBDRAID_INTEROP_CACHE, else $XDG_CACHE_HOME/nbdraid-interop,
# else /var/cache/nbdraid-interop as root, ~/.cache/nbdraid-interop
# otherwise) holds one kernel+initramfs per set of package versions; the
# qemu console log of the last run is $GUEST_CONSOLE (default
# ./guest-console.log) and is printed when the guest fails.
set -eu
set -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
export PATH=/usr/bin:/usr/sbin:/sbin:/bin:$PATH

if [ -n "${NBDRAID_INTEROP_CACHE:-}" ]; then cache=$NBDRAID_INTEROP_CACHE
elif [ -n "${XDG_CACHE_HOME:-}" ]; then cache=$XDG_CACHE_HOME/nbdraid-interop
elif [ "$(id -u)" = 0 ]; then cache=/var/cache/nbdraid-interop
else cache=$HOME/.cache/nbdraid-interop
fi

skip () { echo "SKIP: $*"; exit 77; }

# Host packages the guest's tools come from, and the ones whose files go
# into the initramfs without being installed (nbd-client's install
# scripts fail on a host without the nbd module).
host_pkgs=(qemu-system-x86 busybox-static mdadm e2fsprogs cpio xz-utils
           python3 kmod)
extract_pkgs=(nbd-client libnl-3-200 libnl-genl-3-200)
# Bump when build_image changes what goes into the image.
build_rev=1
# Guest modules; modprobe lists their dependencies in load order.
modules=(md_mod raid0 raid1 raid10 raid456 nbd virtio_pci virtio_blk
         virtio_scsi sd_mod virtio_net ext4 loop)

apt_install () {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
      grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || skip "not root; missing packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 \
    "${missing[@]}" < /dev/null > "$cache/apt.log" 2>&1 || {
    apt-get update -q -o DPkg::Lock::Timeout=600 < /dev/null \
      >> "$cache/apt.log" 2>&1 || :
    apt-get install -y -q --no-install-recommends \
      -o DPkg::Lock::Timeout=600 "${missing[@]}" < /dev/null \
      >> "$cache/apt.log" 2>&1 ||
      skip "apt-get install ${missing[*]} failed (see $cache/apt.log)"
  }
}

# candidate_version PKG: the version apt would install
candidate_version () {
  apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}'
}

# fetch PKG: $cache/debs/PKG_VERSION.deb, downloaded once
fetch () {
  local pkg=$1 ver deb
  ver=$(candidate_version "$pkg")
  [ -n "$ver" ] && [ "$ver" != "(none)" ] || skip "no Debian package $pkg"
  deb=$cache/debs/${pkg}_${ver//:/%3a}_amd64.deb
  if [ ! -s "$deb" ]; then
    (cd "$cache/debs" && apt-get download -q "$pkg=$ver" \
       > "$cache/download.log" 2>&1) ||
      skip "apt-get download $pkg failed (see $cache/download.log)"
  fi
  echo "$deb"
}

kernel_package () {
  apt-cache depends linux-image-amd64 2>/dev/null |
    awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}

# build_image DIR: unpack the kernel, pick the modules, build the
# initramfs (busybox, mdadm, nbd-client, e2fsprogs, their libraries).
build_image () {
  local dir=$1 kpkg=$2 root k kver lib f deb
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp/kernel" "$dir.tmp/extra"
  root=$dir.tmp/root
  mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,lib/modules,tmp}
  dpkg -x "$(fetch "$kpkg")" "$dir.tmp/kernel"
  kver=$(ls "$dir.tmp/kernel/lib/modules")
  depmod -b "$dir.tmp/kernel" "$kver"
  # The xz-compressed vmlinux inside vmlinuz boots directly with qemu's
  # PVH entry, much faster under TCG than the bzImage path.
  python3 - "$dir.tmp/kernel/boot/vmlinuz-$kver" "$dir.tmp/vmlinux.xz" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
i = data.find(b"\xfd7zXZ\x00")
if i < 0:
    sys.exit("no xz stream in " + sys.argv[1])
open(sys.argv[2], "wb").write(data[i:])
PY
  xz -dc --single-stream "$dir.tmp/vmlinux.xz" > "$dir.tmp/vmlinux" 2>/dev/null ||
    [ -s "$dir.tmp/vmlinux" ] || { echo "cannot unpack vmlinux" >&2; return 1; }
  rm -f "$dir.tmp/vmlinux.xz"
  for k in "${modules[@]}"; do
    modprobe -d "$dir.tmp/kernel" -S "$kver" --show-depends "$k" |
      awk '$1 == "insmod" {print $2}'
  done | awk '!seen[$0]++' > "$dir.tmp/modules.paths"
  while read -r f; do
    cp "$f" "$root/lib/modules/"
    echo "${f##*/}"
  done < "$dir.tmp/modules.paths" > "$root/modules"

  for f in "${extract_pkgs[@]}"; do
    deb=$(fetch "$f")
    dpkg -x "$deb" "$dir.tmp/extra"
  done
  cp /bin/busybox "$root/bin/busybox"
  cp "$dir.tmp/extra"/*/nbd-client "$root/sbin/" 2>/dev/null ||
    cp "$dir.tmp/extra"/usr/*/nbd-client "$root/sbin/"
  for f in /sbin/mdadm /sbin/mke2fs /sbin/e2fsck /sbin/debugfs \
           /sbin/dumpe2fs; do
    cp "$f" "$root/sbin/"
  done
  ln -s mke2fs "$root/sbin/mkfs.ext4"
  ln -s e2fsck "$root/sbin/fsck.ext4"
  mkdir -p "$root/lib64" "$root/lib/x86_64-linux-gnu"
  for f in "$root"/sbin/*; do
    [ -L "$f" ] && continue
    LD_LIBRARY_PATH=$dir.tmp/extra/lib/x86_64-linux-gnu:$dir.tmp/extra/usr/lib/x86_64-linux-gnu \
      ldd "$f" | awk '/=>/ {print $3} /ld-linux/ {print $1}'
  done | sort -u | while read -r lib; do
    case $lib in
      */ld-linux-x86-64.so.2) cp -L "$lib" "$root/lib64/" ;;
      /*) cp -L "$lib" "$root/lib/x86_64-linux-gnu/" ;;
    esac
  done
  echo "/lib/x86_64-linux-gnu" > "$root/etc/ld.so.conf"
  touch "$root/etc/mdadm.conf"
  cp "$here/init" "$root/init"
  chmod +x "$root/init"
  (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) \
    > "$dir.tmp/initrd.gz"
  {
    echo "kernel $kpkg $kver"
    for f in busybox-static mdadm e2fsprogs "${extract_pkgs[@]}"; do
      echo "$f $(dpkg-query -W -f='${Version}' "$f" 2>/dev/null ||
                 candidate_version "$f")"
    done
  } > "$dir.tmp/versions"
  rm -rf "$dir.tmp/kernel" "$dir.tmp/extra" "$root" "$dir.tmp/modules.paths"
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
}

# prepare: sets $image, the cache directory of this set of versions.
prepare () {
  mkdir -p "$cache/debs" 2>/dev/null || skip "cannot create the cache $cache"
  exec 9> "$cache/lock"
  flock -w 1800 9 || skip "cache $cache is locked"
  apt_install "${host_pkgs[@]}"
  command -v qemu-system-x86_64 > /dev/null || skip "no qemu-system-x86_64"
  [ -r /usr/share/qemu/qboot.rom ] || skip "no qboot.rom in qemu"
  local kpkg key f
  kpkg=$(kernel_package)
  [ -n "$kpkg" ] || {
    apt-get update -q -o DPkg::Lock::Timeout=600 < /dev/null > /dev/null 2>&1 || :
    kpkg=$(kernel_package)
  }
  [ -n "$kpkg" ] || skip "apt knows no linux-image-amd64"
  key=$( {
    echo "$build_rev"
    apt-cache policy "$kpkg" busybox-static mdadm e2fsprogs \
      "${extract_pkgs[@]}" 2>/dev/null |
      awk '/^[^ ]/ {p = $1} /Candidate:/ {print p, $2}'
    cat "$here/init"
  } | sha256sum | cut -c1-16)
  image=$cache/$key
  if [ ! -s "$image/initrd.gz" ]; then
    "$0" _build "$image" "$kpkg" > "$cache/build.log" 2>&1 ||
      skip "building the guest image failed: $(tail -3 "$cache/build.log")"
    # Images of older package versions are not needed any more.
    find "$cache" -mindepth 1 -maxdepth 1 -type d -name '????????????????' \
      ! -name "$key" -exec rm -rf {} +
  fi
  if [ ! -e "$image/boots" ]; then
    local out
    printf 'echo hello from $(uname -r)\ncat /proc/mdstat\n' > "$cache/smoke.sh"
    out=$(GUEST_CONSOLE=$cache/smoke-console.log \
          boot --timeout 300 "$cache/smoke.sh" 2>&1) ||
      skip "the guest does not boot here: $out $(tail -5 "$cache/smoke-console.log")"
    case $out in
      *"hello from"*raid10*) touch "$image/boots" ;;
      *) skip "the guest boots without md: $out" ;;
    esac
  fi
  exec 9>&-
}

# boot [--disk NAME=FILE]... [--qemu ARG]... [--net] [--timeout S] SCRIPT
boot () {
  local timeout=600 net=false disks=() extra=() script t rc n=0 d try
  while [ $# -gt 1 ]; do
    case $1 in
      --disk) disks+=("$2"); shift 2 ;;
      --qemu) extra+=("$2"); shift 2 ;;
      --net) net=true; shift ;;
      --timeout) timeout=$2; shift 2 ;;
      *) echo "guest.sh: unknown option $1" >&2; return 2 ;;
    esac
  done
  script=$1
  t=$(mktemp -d "${TMPDIR:-/tmp}/nbdraid-guest.XXXXXX")
  mkdir "$t/run"
  cp "$script" "$t/run/test.sh"
  : > "$t/run/disks"
  local args=(-M q35 -accel tcg,thread=multi -cpu max -smp 2 -m 1024
              -nodefaults -display none -no-reboot
              -bios /usr/share/qemu/qboot.rom
              -kernel "$image/vmlinux" -initrd "$t/initrd"
              -append "console=ttyS0 quiet loglevel=4 panic=-1 cryptomgr.notests nowatchdog tsc=reliable rdinit=/init"
              -serial "file:$t/console" -serial "file:$t/out")
  if [ ${#disks[@]} -gt 0 ]; then
    args+=(-device virtio-scsi-pci,id=scsi0)
    for d in "${disks[@]}"; do
      args+=(-drive "file=${d#*=},format=raw,if=none,id=d$n,cache=unsafe"
             -device "scsi-hd,drive=d$n,bus=scsi0.0,channel=0,scsi-id=$n,lun=0")
      echo "$n ${d%%=*}" >> "$t/run/disks"
      n=$((n + 1))
    done
  fi
  if $net; then
    touch "$t/run/net"
    args+=(-netdev user,id=n0,net=10.0.2.0/24 -device virtio-net-pci,netdev=n0)
  fi
  (cd "$t/run" && find . | cpio -o -H newc --quiet) > "$t/run.cpio"
  # The kernel takes the appended archive only from a 4-byte boundary
  # (zeros between archives are skipped); gzip's output ends anywhere.
  local pad=$(( (4 - $(stat -c %s "$image/initrd.gz") % 4) % 4 ))
  { cat "$image/initrd.gz"; head -c "$pad" /dev/zero; cat "$t/run.cpio"; } \
    > "$t/initrd"
  # Under TCG a boot has, rarely, hung before the kernel started /init
  # (1 boot in about 20, nothing on either serial port): boot once more
  # then.  A guest that reached /init and hung fails at once.
  for try in 1 2; do
    rc=0
    timeout -k 10 "$timeout" qemu-system-x86_64 "${args[@]}" \
      ${extra[@]+"${extra[@]}"} < /dev/null > "$t/qemu.out" 2>&1 || rc=$?
    [ $rc = 124 ] && ! grep -q '^NBDRAID-GUEST-UP' "$t/out" && [ $try = 1 ] ||
      break
    echo "guest.sh: the kernel did not reach /init in $timeout s; booting again"
  done
  cp "$t/console" "${GUEST_CONSOLE:-guest-console.log}" 2>/dev/null || :
  tr -d '\r' < "$t/out" | grep -v '^NBDRAID-GUEST-\(EXIT \|UP\)' || :
  local status
  status=$(tr -d '\r' < "$t/out" | sed -n 's/^NBDRAID-GUEST-EXIT //p' | tail -1)
  if [ -z "$status" ]; then
    if [ $rc = 124 ]; then echo "guest.sh: the guest did not finish in $timeout s"
    else echo "guest.sh: the guest died (qemu exit $rc)"; fi
    cat "$t/qemu.out"
    echo "--- guest console (last 40 lines):"
    tail -40 "$t/console"
    rm -rf "$t"
    [ $rc = 124 ] && return 124
    return 1
  fi
  rm -rf "$t"
  return "$status"
}

case ${1:-} in
  prepare) prepare ;;
  run) shift; prepare > /dev/null; boot "$@" ;;
  _build) shift; build_image "$@" ;;
  *) sed -n '2,23p' "$0"; exit 2 ;;
esac
