#!/usr/bin/env bash
# The differential of `as-edit --toolset agent_toolset_20260401` against
# Anthropic's reference tools (scripts/toolset-diff.py has
# the details): a venv holding the pinned `anthropic`, then the comparison on
# the release binary.
# Usage: scripts/toolset-diff.sh [CASES] [SEED]   (default 3000 cases, seed 35)
#
# The reference's texts depend on its environment, which is pinned: Python
# 3.11 (pathlib.Path.glob's rules) and Debian 12's ripgrep 13 on PATH (the
# grep tool runs rg). A fresh machine gets ripgrep and python3-venv from
# apt; nothing is ever removed. Env: AS_EDIT (the binary; default: build
# target/release/as-edit), PYTHON (a Python 3.11; default python3),
# TOOLSET_VENV (default target/toolset-venv), TOOLSET_DIFF_TOOLS (default
# read,write,edit,glob,grep).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

command -v rg >/dev/null || apt_need ripgrep
py=$(scripts/toolset-venv.sh)

bin=${AS_EDIT:-}
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin=${CARGO_TARGET_DIR:-target}/release/as-edit
fi
exec "$py" scripts/toolset-diff.py --bin "$bin" --cases "${1:-3000}" --seed "${2:-35}" \
  --tools "${TOOLSET_DIFF_TOOLS:-read,write,edit,glob,grep}"
