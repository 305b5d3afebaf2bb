# Shared by the scripts: install what a fresh machine lacks, loudly.
# shellcheck shell=bash

die() { echo "error: $*" >&2; exit 1; }

# apt_need PKG... : installs Debian packages when missing (root only).
apt_need() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  ((${#missing[@]})) || return 0
  [ "$(id -u)" = 0 ] || die "missing Debian packages: ${missing[*]} (run as root, or apt-get install them)"
  command -v apt-get >/dev/null || die "missing packages ${missing[*]} and no apt-get to install them"
  echo "installing: ${missing[*]}" >&2
  if [ -z "${AS_EDIT_APT_UPDATED:-}" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || die "apt-get update failed"
    export AS_EDIT_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
}

# rust_target_need TRIPLE... : adds rustup targets when missing.
rust_target_need() {
  local have
  have=$(rustup target list --installed 2>/dev/null) || die "rustup not found"
  for t in "$@"; do
    grep -qx "$t" <<<"$have" || rustup target add "$t" >&2 || die "rustup target add $t failed"
  done
}

pkg_version() { sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1; }
