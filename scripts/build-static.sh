#!/usr/bin/env bash
# Builds the fully static release binaries and writes them to dist/:
#   dist/as-edit-<version>-<target> and a .sha256 beside each.
# Usage: scripts/build-static.sh [TARGET...]   (default: x86_64 and aarch64 musl)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

targets=("$@")
((${#targets[@]})) || targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
apt_need file
rust_target_need "${targets[@]}"
version=$(pkg_version)
mkdir -p dist
rows=()
for t in "${targets[@]}"; do
  case "$t" in
    x86_64-*) machine="x86-64" ;;
    aarch64-*) machine="ARM aarch64" ;;
    *) die "unsupported target $t" ;;
  esac
  cargo build --quiet --release --locked --target "$t"
  out="dist/as-edit-$version-$t"
  cp "target/$t/release/as-edit" "$out"
  # The release profile strips already; strip again only if a strip for the
  # machine is at hand (llvm-strip handles both).
  desc=$(file -b "$out")
  grep -q "$machine" <<<"$desc" || die "$out is not built for $machine: $desc"
  grep -Eq "statically linked|static-pie linked" <<<"$desc" || die "$out is not static: $desc"
  grep -q "stripped" <<<"$desc" && ! grep -q "not stripped" <<<"$desc" || die "$out is not stripped: $desc"
  size=$(stat -c %s "$out")
  [ "$size" -le 1048576 ] || die "$out is $size bytes, over the 1 MiB budget"
  (cd dist && sha256sum "$(basename "$out")" > "$(basename "$out").sha256")
  rows+=("$t $size $(cut -d' ' -f1 "$out.sha256")")
done
printf '%-28s %10s  %s\n' target bytes sha256
for r in "${rows[@]}"; do
  read -r t s h <<<"$r"
  printf '%-28s %10s  %s\n' "$t" "$s" "$h"
done
