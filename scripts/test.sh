#!/usr/bin/env bash
# Every test of the project, as CI runs it. Installs what a fresh machine lacks,
# never removing or downgrading what it has (apt_need, scripts/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

step() { printf '\n==> %s\n' "$*"; }

step "the scripts never remove or downgrade a package (every apt install with --no-remove; apt_need's refusals)"
scripts/no-remove.sh

rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
# Root-only test tools: busybox (minimal-image roots), qemu (aarch64),
# acl (ACL preservation), strace (--fsync syscalls), time (peak RSS of one
# child; scripts/power-cut.sh
# installs its own). As another user, the
# tests that need them say why they skip, and conformance fails clearly.
# ripgrep and rust-src: the toolset's differential against rg on the
# Rust standard library's source (tests/walk_diff.rs).
[ "$(id -u)" = 0 ] && apt_need busybox-static qemu-user-static acl strace time ripgrep
rustup component list --installed 2>/dev/null | grep -q '^rust-src' || rustup component add rust-src

step "format and lints"
cargo fmt --all -- --check
cargo clippy --quiet --workspace --all-targets --all-features -- -D warnings

step "docs: every crate's, no rustdoc warning (links, missing docs)"
RUSTDOCFLAGS="-D warnings" cargo doc --quiet --workspace --all-features --no-deps

step "the crate graph: the pure crates hold no system-call crate, the host crate not the helper"
for pkg in as-edit-text as-edit-find as-edit-wire; do
  tree=$(cargo tree --quiet --offline -e normal -p "$pkg")
  ! grep -E '^[^a-z]*(rustix|libc|memmap2) v' <<<"$tree" || die "$pkg depends on a system-call crate"
done
tree=$(cargo tree --quiet --offline -e normal --all-features -p as-edit-host)
! grep -E '^[^a-z]*as-edit v' <<<"$tree" || die "as-edit-host depends on the helper crate (as-edit)"
echo "ok: the pure crates and the host crate"

step "rooms: every file under src/ and crates/ at most 450 lines before its tests"
# Lines before the test module: a `#[cfg(test)]` whose next line opens an
# inline `mod … {` (one on another item mid-file, a thread_local counter or
# a `mod testing;`, is code and counts: stopping there hid matcher.rs's 461).
rooms_over=$(for f in $(find src crates -name '*.rs' | sort); do
  n=$(awk 'held { held = 0; if ($0 ~ /^(pub(\([a-z]+\))? )?mod .*\{$/) exit; n += 2; next }
           /^#\[cfg\(test\)\]$/ { held = 1; next } { n++ } END { print n + held }' "$f")
  [ "$n" -le 450 ] || echo "$f: $n lines"
done)
[ -z "$rooms_over" ] || die "over the 450-line bound (split by concern): $rooms_over"
echo "ok: $(find src crates -name '*.rs' | wc -l) files"

step "the crates package: what a user needs, and they build"
# Offline: clippy above fetched every dependency of Cargo.lock. Each
# package's list apart (paths are relative to its own directory); the
# helper's and each member crate's licences, code and docs.
pkg_files=0
pkgs=(as-edit as-edit-text as-edit-find as-edit-wire as-edit-host)
for pkg in "${pkgs[@]}"; do
  case "$pkg" in
    as-edit) need=(Cargo.toml README.md LICENSE-MIT LICENSE-APACHE src/lib.rs src/main.rs) ;;
    as-edit-text) need=(Cargo.toml LICENSE-MIT LICENSE-APACHE src/lib.rs src/engine/mod.rs src/hints/hints.md src/patch/passes.md) ;;
    as-edit-wire) need=(Cargo.toml LICENSE-MIT LICENSE-APACHE src/lib.rs src/protocol.rs src/strict_json.rs src/txn.rs) ;;
    as-edit-find) need=(Cargo.toml LICENSE-MIT LICENSE-APACHE src/lib.rs src/glob.rs src/gitignore.rs src/grep.rs src/read/lines.md) ;;
    as-edit-host) need=(Cargo.toml LICENSE-MIT LICENSE-APACHE src/lib.rs src/install.md src/docker/docker.md src/docker/mod.rs) ;;
  esac
  pkg_list=$(cargo package -p "$pkg" --list --quiet --allow-dirty --locked --offline)
  pkg_bad=$(grep -E '^(dist|fuzz|scripts|crates|proptest-regressions|target|\.cargo|\.ci)/|^tests/scenarios(/|\.rs$)|\.proptest-regressions$|^cross\.toml$' <<<"$pkg_list" || true)
  [ -z "$pkg_bad" ] || die "cargo package -p $pkg would ship: $pkg_bad"
  for f in "${need[@]}"; do
    grep -qx "$f" <<<"$pkg_list" || die "cargo package -p $pkg would not ship $f"
  done
  pkg_files=$((pkg_files + $(wc -l <<<"$pkg_list")))
done
# Verifies by building each unpacked archive, the helper against the
# member crates' archives, not their paths. Cargo serves those archives
# from a registry of its own and takes a registry crate of the same name
# and version as unchanged: it keeps the copy it unpacked into its source
# cache (one per registry path) and the build of it in the target folder.
# A checkout at the same path would build against the member crates of an
# earlier commit; so the verify builds in a target folder of its own, from
# which this project's registry builds go first, and cargo's unpacked
# copies of this project's crates (only those: local registries' folders,
# our packages' names) go too.
verify_dir=target/package-verify
rm -rf "$verify_dir"/debug/.fingerprint/as-edit-* "$verify_dir"/debug/deps/*as_edit*
cargo_src="${CARGO_HOME:-$HOME/.cargo}/registry/src"
for pkg in "${pkgs[@]}"; do
  for d in "$cargo_src"/-*/"$pkg"-[0-9]*; do
    [ ! -e "$d" ] || rm -rf -- "$d"
  done
done
cargo package --workspace --quiet --allow-dirty --locked --offline --target-dir "$verify_dir"
echo "ok: $pkg_files files in ${#pkgs[@]} packages"

step "static release builds"
scripts/build-static.sh
version=$(pkg_version)
export AS_EDIT_STATIC_BIN="$PWD/dist/as-edit-$version-x86_64-unknown-linux-musl"

step "the release profile (panic=abort) still prints the panic result line"
cargo build --quiet --release --features fault-injection --target-dir target/fault-injection
probe_dir=$(mktemp -d)
printf 'abc' > "$probe_dir/f"
line=$(cd "$probe_dir" && AS_EDIT_TEST_PANIC=1 "$OLDPWD/target/fault-injection/release/as-edit" f YWJj eHl6) && rc=0 || rc=$?
want='__RESULT__{"error":"internal_error","detail":"injected test panic"}'
[ "$line" = "$want" ] && [ "$rc" = 1 ] && [ "$(cat "$probe_dir/f")" = abc ] && [ "$(ls -A "$probe_dir")" = f ] \
  || die "release panic path: got '$line' exit $rc"
rm -rf "$probe_dir"
echo "ok: $want, exit 1, file and directory unchanged"

step "unit, property, CLI, reliability and host tests, and the doctests"
cargo test --workspace --all-features

step "conformance in a busybox-only root"
scripts/conformance.sh "dist/as-edit-$version-x86_64-unknown-linux-musl" --arch x86_64
scripts/conformance.sh "dist/as-edit-$version-aarch64-unknown-linux-musl" --arch aarch64

# Root only (loop mounts); as another user it fails, naming why.
step "power cuts in a qemu guest: 8 cuts of ext4 and xfs, with and without --fsync (~3.5 min; --cuts 200 on demand)"
scripts/power-cut.sh --cuts 8 --ops 16 --bin "$AS_EDIT_STATIC_BIN"

step "SIGKILL residue on loop-mounted btrfs, ext4 and xfs (a short run; scripts/kill-residue.sh alone runs 300 per file system)"
# Kills aimed at the pid and at the process group, around the commit: the
# link and rename are a child's that survives both (src/fs/window.rs), so
# no kill may leave a name; the median window is checked too.
scripts/kill-residue.sh --kills 40 --windows 20 --max-residue 0 --bin "$AS_EDIT_STATIC_BIN"

step "conformance against a real Docker engine (AS_EDIT_SKIP_DOCKER=1 skips)"
scripts/docker-test.sh --bin "$AS_EDIT_STATIC_BIN"

step "the patch differential against Codex's apply_patch and the Agents SDK's apply_diff: 1,000 generated patches (scripts/patch-diff.sh alone runs 3,000)"
# Exits 1 on any difference no known reason explains (scripts/patch-diff.py).
scripts/patch-diff.sh 1000 1

step "the toolset differential against Anthropic's reference tools (anthropic 2.17.0 with rg 13): 2,000 generated cases, counts printed (scripts/toolset-diff.sh alone runs 3,000)"
# Exits 1 on any difference no documented reason explains (scripts/toolset-diff.py).
AS_EDIT="$AS_EDIT_STATIC_BIN" scripts/toolset-diff.sh 2000 35

step "the AgentScope adapter in Java: javac against the stand-ins, its driver under sh and under a busybox-only PATH"
scripts/java-test.sh "$AS_EDIT_STATIC_BIN"

step "fuzzing, bounded (scripts/fuzz.sh runs longer on demand)"
scripts/fuzz.sh 20

step "benchmark, quick mode (proves it runs; figures come from a full run)"
scripts/bench.sh --quick --bin "$AS_EDIT_STATIC_BIN"
scripts/callgrind.sh --bin "$AS_EDIT_STATIC_BIN"  # instruction budgets: deterministic, unlike the timings

echo
echo "all checks passed"
