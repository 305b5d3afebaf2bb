#!/usr/bin/env bash
# The differential test of the V4A applier against Codex's apply_patch and
# the Agents SDK's apply_diff (scripts/patch-diff.py has the details).
# Usage: scripts/patch-diff.sh [CASES] [SEED]   (default 3000 cases, seed 1)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
eval "$(scripts/patch-refs.sh)"
APPLY_PATCH=$APPLY_PATCH exec "$AGENTS_PY" scripts/patch-diff.py "${1:-3000}" "${2:-1}"
