#!/usr/bin/env bash
# Every test of the project, as CI runs it. Installs what a fresh machine lacks.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

step() { printf '\n==> %s\n' "$*"; }

rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy

step "format and lints"
cargo fmt --all -- --check
cargo clippy --quiet --all-targets --all-features -- -D warnings

step "unit, property, CLI and host tests"
# setfacl/getfacl for the ACL-preservation test (as non-root it says why it skips).
[ "$(id -u)" = 0 ] && apt_need acl
# Root lets the tests drop privileges and use private mount namespaces;
# as another user those cases print why they are skipped.
cargo test --all-features

step "static release builds"
scripts/build-static.sh

step "conformance in a busybox-only root"
version=$(pkg_version)
scripts/conformance.sh "dist/as-edit-$version-x86_64-unknown-linux-musl" --arch x86_64
scripts/conformance.sh "dist/as-edit-$version-aarch64-unknown-linux-musl" --arch aarch64

step "benchmark, quick mode (proves it runs; figures come from a full run)"
scripts/bench.sh --quick --bin "$PWD/dist/as-edit-$version-x86_64-unknown-linux-musl"

echo
echo "all checks passed"
