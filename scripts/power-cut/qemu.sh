# Sourced by scripts/power-cut.sh (after scripts/common.sh): finds a
# qemu-system-x86_64 without changing a package the machine has.
# shellcheck shell=bash

# qemu_get CACHE : sets qemu_bin and qemu_dirs (firmware directories for -L,
# empty for an installed qemu) and says on stdout which way was taken.
#  - qemu-system-x86 installed, or installable without removing or
#    downgrading anything: apt_need installs it (the way a fresh machine goes).
#  - otherwise (on this project's machine: a qemu-utils 10 from
#    bookworm-backports Breaks bookworm's qemu-system-common 7.2): the
#    candidate qemu-system-x86, qemu-system-common (its TCG accelerator is a
#    module), qemu-system-data (option ROMs: linuxboot_dma.bin, pvh.bin) and
#    seabios (bios-256k.bin) are fetched with apt-get download and unpacked
#    into CACHE/qemu-private/VERSION, never installed; only qemu-system-x86's
#    library dependencies are installed, through apt_need (so never with a
#    removal), and ldd must resolve every library of the private binary.
qemu_get() {
  local v root tmp libs missing
  qemu_dirs=()
  if apt_can qemu-system-x86; then
    (apt_need qemu-system-x86) || fail "installing qemu-system-x86 failed"
    qemu_bin=$(command -v qemu-system-x86_64) || fail "qemu-system-x86 is installed but no qemu-system-x86_64 is on PATH"
    echo "power-cut: qemu: the installed package qemu-system-x86 $(dpkg-query -W -f='${Version}' qemu-system-x86) ($qemu_bin)"
    return 0
  fi
  v=$(LC_ALL=C apt-cache policy qemu-system-x86 | sed -n 's/^ *Candidate: //p')
  [ -n "$v" ] && [ "$v" != "(none)" ] || fail "qemu-system-x86 cannot be installed without removals and apt offers none to download"
  root="$1/qemu-private/${v//:/_}"
  if [ ! -f "$root/deps" ]; then
    tmp="$root.tmp"
    rm -rf "$tmp" && mkdir -p "$tmp/debs"
    # The machine's candidate versions; common must equal x86's (exact Depends).
    (cd "$tmp/debs" && apt-get download -q "qemu-system-x86=$v" "qemu-system-common=$v" qemu-system-data seabios >&2) \
      || fail "apt-get download of qemu-system-x86 $v and its data failed"
    local d
    for d in "$tmp"/debs/*.deb; do
      dpkg-deb -x "$d" "$tmp" || fail "dpkg-deb -x $d failed"
    done
    # Its Depends minus the packages unpacked here (and ipxe-qemu: the guest
    # has no network card): the libraries it links, first alternative each.
    dpkg-deb -f "$tmp"/debs/qemu-system-x86_*.deb Depends | tr ',' '\n' \
      | sed 's/^ *//; s/[ (|].*//' | grep -Ev '^(qemu-system-.*|seabios|ipxe-qemu)$' >"$tmp/deps.tmp"
    rm -rf "$tmp/debs" && mv "$tmp/deps.tmp" "$tmp/deps"
    rm -rf "$root" && mv "$tmp" "$root"
  fi
  mapfile -t libs <"$root/deps"
  (apt_need "${libs[@]}") || fail "installing the libraries of the private qemu failed"
  qemu_bin="$root/usr/bin/qemu-system-x86_64"
  missing=$(ldd "$qemu_bin" "$root"/usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so 2>&1 | grep 'not found' | sort -u | xargs) || true
  [ -z "$missing" ] || fail "the private $qemu_bin lacks libraries: $missing"
  # qemu looks for its modules (accel-tcg) here, beside its relocated default.
  export QEMU_MODULE_DIR="$root/usr/lib/x86_64-linux-gnu/qemu"
  qemu_dirs=("$root/usr/share/qemu" "$root/usr/share/seabios")
  "$qemu_bin" --version >/dev/null || fail "the private $qemu_bin does not run"
  echo "power-cut: qemu: a private qemu-system-x86 $v unpacked in $root, not installed (installing it would remove or downgrade a package: apt-get install -s --no-remove qemu-system-x86 shows which)"
}
