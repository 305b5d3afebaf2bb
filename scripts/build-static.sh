#!/usr/bin/env bash
# Builds the fully static release binaries and writes them to dist/:
#   dist/as-edit-<version>-<target> and a .sha256 beside each.
# Usage: scripts/build-static.sh [TARGET...]   (default: x86_64 and aarch64 musl)
#
# Size: std is rebuilt from source (-Zbuild-std) without its `backtrace`
# feature. With panic=abort the helper never unwinds, and its panic hook
# prints the result line itself, but the prebuilt std still links the
# default hook's backtrace symbolizer (gimli, addr2line, libunwind). The
# pinned stable toolchain builds it: RUSTC_BOOTSTRAP=1 unlocks the -Z flags
# for this build only. AS_EDIT_PLAIN_STD=1 builds with the prebuilt std
# instead (bigger, same behaviour). std's `optimize_for_size` feature picks
# its small sort and formatting code, with the callgrind counts unchanged
# (within 1%): the hot paths are memchr's and the engine's, not std's. No
# unwind tables (`-C force-unwind-tables=no`): the binary aborts on panic,
# after its hook has printed the result line, and never unwinds or prints a
# backtrace, so .eh_frame would be dead weight. --cfg as_edit_small turns
# on #[optimize(size)] for the code that runs once per request (see
# src/lib.rs; the engine's and the sink's loops stay at opt-level 3), with
# callgrind's cases within their budgets; -Zlocation-detail=none drops the
# file/line/column of every panic site, which the hook never prints (it
# prints the message). Relative relocations are packed (-z
# pack-relative-relocs, DT_RELR, which the bundled musl's static-PIE
# start-up applies since 1.2.4): smaller, still position-independent (the
# aarch64 link with rust-lld has none to pack). The result: 1,382,896
# bytes x86_64, 1,254,192 aarch64; what each flag saves, measured, is in
# scripts/bench/README.md ("Binary size"), what the workspace's crate
# split costs in "The crates' cost".
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

targets=("$@")
((${#targets[@]})) || targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
apt_need file
rust_target_need "${targets[@]}"
std_flags=()
if [ "${AS_EDIT_PLAIN_STD:-0}" != 1 ]; then
  rustup component list --installed 2>/dev/null | grep -q '^rust-src' || rustup component add rust-src >&2 \
    || die "rustup component add rust-src failed"
  std_flags=(-Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size)
fi
version=$(pkg_version)
mkdir -p dist
rows=()
for t in "${targets[@]}"; do
  case "$t" in
    x86_64-*) machine="x86-64" relr='"-C", "link-arg=-Wl,-z,pack-relative-relocs"' ;;
    aarch64-*) machine="ARM aarch64" relr='"-C", "link-arg=-zpack-relative-relocs"' ;;
    *) die "unsupported target $t" ;;
  esac
  # Its own target dir: a std built from source must not thrash the
  # prebuilt-std artifacts other cargo commands use.
  # --config appends to .cargo/config.toml's rustflags for the target.
  RUSTC_BOOTSTRAP=1 cargo build --quiet --release --locked --target "$t" --target-dir target/static "${std_flags[@]}" \
    --config "target.$t.rustflags=[\"-C\", \"force-unwind-tables=no\", \"--cfg\", \"as_edit_small\", \"-Zlocation-detail=none\", $relr]"
  out="dist/as-edit-$version-$t"
  cp "target/static/$t/release/as-edit" "$out"
  # The release profile strips already; strip again only if a strip for the
  # machine is at hand (llvm-strip handles both).
  desc=$(file -b "$out")
  grep -q "$machine" <<<"$desc" || die "$out is not built for $machine: $desc"
  grep -Eq "statically linked|static-pie linked" <<<"$desc" || die "$out is not static: $desc"
  grep -q "stripped" <<<"$desc" && ! grep -q "not stripped" <<<"$desc" || die "$out is not stripped: $desc"
  size=$(stat -c %s "$out")
  # The budget of the uploaded binary: 1.5 MiB, for the toolset with
  # ripgrep's regex engine and Unicode tables and the snapshot ops to come.
  # The `regex` crate's measured cost is in the README's
  # Performance section and scripts/bench/README.md. The prebuilt-std
  # fallback has no size build of std, so it gets 2 MiB.
  budget=1572864
  ((${#std_flags[@]})) || budget=2097152
  [ "$size" -le "$budget" ] || die "$out is $size bytes, over the $budget byte budget"
  (cd dist && sha256sum "$(basename "$out")" > "$(basename "$out").sha256")
  rows+=("$t $size $(cut -d' ' -f1 "$out.sha256")")
done
printf '%-28s %10s  %s\n' target bytes sha256
for r in "${rows[@]}"; do
  read -r t s h <<<"$r"
  printf '%-28s %10s  %s\n' "$t" "$s" "$h"
done
