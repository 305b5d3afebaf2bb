#!/usr/bin/env bash
# Runs each cargo-fuzz target for a bounded time (nightly toolchain).
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

secs=${1:-60}
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
for target in engine args patch stdin_fast glob gitignore; do
  echo "fuzzing $target for ${secs}s"
  cargo +nightly fuzz run "$target" -- -max_total_time="$secs" -rss_limit_mb=2048 2>&1 | tail -n 3
done
echo "fuzz: no crash in ${secs}s per target"
