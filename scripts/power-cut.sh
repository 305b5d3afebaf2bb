#!/usr/bin/env bash
# Power cuts in a real virtual machine: boots a Debian kernel under
# qemu-system-x86_64 with a busybox initramfs holding the static as-edit and
# a driver (scripts/power-cut/guest-init.sh), runs loops of edits on ext4 and
# xfs work disks, SIGKILLs qemu at a random instant and holds every disk
# against the console log (scripts/power-cut/cut.py). Method, figures and
# the meaning of each column: scripts/bench/README.md, "Power cuts".
#
# Usage: scripts/power-cut.sh [--cuts N] [--ops K] [--seconds S] [--bin PATH] [--seed S]
#                             [--disks ext4:1,ext4:0,xfs:1,xfs:0] [--accel auto|tcg|kvm]
#   --cuts N   boots and cuts per run (default 3); every disk is cut each time
#   --ops K    edits per disk per boot (default 40)
#   --seconds S  start no cut after S seconds (default 0: no bound)
#   --bin      the static x86_64 binary (default: scripts/build-static.sh's)
#   --disks    FS:FSYNC per work disk, each its own series, mkfs'ed fresh
# Needs root (loop mounts, mkfs). Exit 0: every check held; 1: a violation
# (torn, empty, a refused edit's content, a file in no log, fsck unclean,
# or with --fsync an edit lost after its success line); 2: the harness
# could not run. It never skips.
# Kernel, packages and a private qemu (when installing qemu-system-x86
# would remove a package: scripts/power-cut/qemu.sh) are cached in
# $AS_EDIT_POWER_CUT_CACHE (default target/power-cut); each run's images
# and console logs stay in its run-* directory there.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
trap 'exit 2' ERR

cuts=3 ops=40 seconds=0 bin= seed= disks=ext4:1,ext4:0,xfs:1,xfs:0 accel=auto
while (($#)); do
  case "$1" in
    --cuts) cuts=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --disks) disks=$2; shift 2 ;;
    --accel) accel=$2; shift 2 ;;
    *) echo "usage: $0 [--cuts N] [--ops K] [--seconds S] [--bin PATH] [--seed S] [--disks LIST] [--accel auto|tcg|kvm]" >&2; exit 2 ;;
  esac
done
fail() { echo "power-cut: error: $*" >&2; exit 2; }
# The first cut comes after the whole series (it measures its length), so
# one cut would test no crash at all.
[ "$cuts" -ge 2 ] 2>/dev/null || fail "--cuts takes 2 or more (the first cut only measures the series)"
[ "$(id -u)" = 0 ] || fail "needs root (loop mounts of the work disks)"

(apt_need busybox-static e2fsprogs xfsprogs kmod python3 util-linux file) || fail "installing the packages it needs failed"

cache=${AS_EDIT_POWER_CUT_CACHE:-$PWD/target/power-cut}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
# qemu-system-x86 installed when that removes nothing, else a private copy
# (scripts/power-cut/qemu.sh): sets qemu_bin and qemu_dirs.
. scripts/power-cut/qemu.sh
qemu_get "$cache"

if [ -z "$bin" ]; then
  scripts/build-static.sh x86_64-unknown-linux-musl >&2 || fail "scripts/build-static.sh failed"
  bin="dist/as-edit-$(pkg_version)-x86_64-unknown-linux-musl"
fi
[ -x "$bin" ] || fail "no executable binary at $bin"
file -b "$bin" | grep -Eq 'statically linked|static-pie linked' || fail "$bin is not static"
proto=$("$bin" --version | sed -n 's/.*(protocol \([0-9]*\);.*/\1/p')
[ -n "$proto" ] || fail "$bin --version names no protocol"

# The kernel linux-image-amd64 depends on now; its modules come from the same
# package, which ships no modules.dep: depmod -b makes one.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: \(linux-image-[0-9.-]*-amd64\)$/\1/p' | head -n 1)
if [ -z "$pkg" ]; then
  [ -n "${AS_EDIT_APT_UPDATED:-}" ] || { apt-get update -qq >&2 || fail "apt-get update failed"; }
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: \(linux-image-[0-9.-]*-amd64\)$/\1/p' | head -n 1)
fi
[ -n "$pkg" ] || fail "apt offers no linux-image-amd64 (is this Debian with main in sources?)"
kver=${pkg#linux-image-}
ktree="$cache/$pkg"
if [ ! -f "$ktree/boot/vmlinuz-$kver" ]; then
  (cd "$cache" && rm -f "$pkg"_*.deb && apt-get download "$pkg" >&2) || fail "apt-get download $pkg failed"
  rm -rf "$ktree.tmp" && mkdir -p "$ktree.tmp"
  dpkg-deb -x "$cache/$pkg"_*.deb "$ktree.tmp" || fail "dpkg-deb -x failed"
  depmod -b "$ktree.tmp" "$kver" || fail "depmod failed"
  rm -rf "$ktree" && mv "$ktree.tmp" "$ktree"
fi
# Under TCG, unpacking the xz-compressed bzImage costs more than the boot
# itself (18 s against 5.5 s wall measured): the kernel is built with
# CONFIG_PVH, so qemu boots the uncompressed ELF inside it directly.
kernel="$ktree/boot/vmlinuz-$kver"
if grep -qx 'CONFIG_PVH=y' "$ktree/boot/config-$kver"; then
  [ -f "$ktree/vmlinux" ] || python3 - "$kernel" "$ktree/vmlinux" <<'EOF' || fail "unpacking the kernel's ELF failed"
import lzma, sys
b = open(sys.argv[1], "rb").read()
i = b.find(b"\xfd7zXZ\x00")
elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(b[i:]) if i >= 0 else b""
if elf[:4] != b"\x7fELF":
    sys.exit("no xz-compressed ELF in " + sys.argv[1])
open(sys.argv[2] + ".tmp", "wb").write(elf)
EOF
  [ -f "$ktree/vmlinux" ] || mv "$ktree/vmlinux.tmp" "$ktree/vmlinux"
  kernel="$ktree/vmlinux"
fi

run="$cache/run-$(date -u +%Y%m%dT%H%M%S)-$$"
root="$run/initramfs"
mkdir -p "$root"/{bin,dev,proc,sys,mnt,lib/modules}
cp /bin/busybox "$root/bin/busybox"
for a in $("$root/bin/busybox" --list); do [ "$a" = busybox ] || ln -s busybox "$root/bin/$a"; done
cp "$bin" "$root/bin/as-edit"
cp scripts/power-cut/guest-init.sh "$root/init"
chmod 755 "$root/init"
# The modules in dependency order (modprobe's own resolution).
: > "$root/lib/modules/order"
for m in virtio_pci virtio_blk crc32c_generic crc32c_intel ext4 xfs; do
  while read -r _ ko _; do
    b=$(basename "$ko")
    grep -qx "$b" "$root/lib/modules/order" && continue
    cp "$ko" "$root/lib/modules/$b"
    echo "$b" >> "$root/lib/modules/order"
  done < <(modprobe -d "$ktree" -S "$kver" --show-depends "$m" | grep '^insmod ')
done
(cd "$root" && find . | "$root/bin/busybox" cpio -o -H newc 2>/dev/null) > "$run/initrd.cpio" \
  || fail "cpio of the initramfs failed"

echo "power-cut: kernel $kver, binary $bin (protocol $proto), run directory $run" >&2
args=(--kernel "$kernel" --initrd "$run/initrd.cpio" --work "$run"
  --qemu "$qemu_bin" --proto "$proto" --cuts "$cuts" --ops "$ops" --seconds "$seconds" --disks "$disks" --accel "$accel")
[ -z "$seed" ] || args+=(--seed "$seed")
for d in "${qemu_dirs[@]}"; do args+=(--qemu-dir "$d"); done
trap - ERR
rc=0
python3 scripts/power-cut/cut.py "${args[@]}" || rc=$?
# Images are large: kept only when a check failed (cut.py copies those).
rm -f "$run"/disk*.img
exit "$rc"
