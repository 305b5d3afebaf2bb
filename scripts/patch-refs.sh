#!/usr/bin/env bash
# Installs the two reference V4A appliers for the differential harness
# (scripts/patch-diff.py) and prints where they are:
#   APPLY_PATCH=<dir>/apply_patch   Codex's static musl binary, symlinked under
#                                   the name that makes it act as apply_patch
#   AGENTS_PY=<dir>/venv/bin/python a virtualenv with openai-agents (agents.apply_diff)
# Cache: $AS_EDIT_PATCH_REFS (default target/patch-refs), outside git's view.
# Usage: scripts/patch-refs.sh   (idempotent; re-run to reuse the cache)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

dir=${AS_EDIT_PATCH_REFS:-$PWD/target/patch-refs}
mkdir -p "$dir"
command -v npm >/dev/null || apt_need npm
command -v python3 >/dev/null || apt_need python3 python3-venv

if [ ! -x "$dir/apply_patch" ]; then
  echo "installing @openai/codex into $dir/npm (large: the native binary is ~300 MB)" >&2
  npm install --silent --prefix "$dir/npm" @openai/codex >&2 || die "npm install @openai/codex failed"
  # The package ships per-platform optional packages; the binary is the one
  # ELF file named codex under node_modules for this machine's triple.
  bin=$(find "$dir/npm/node_modules" -type f -name codex -size +1M 2>/dev/null \
    | while read -r f; do head -c 4 "$f" | grep -q ELF && echo "$f"; done | head -n 1)
  [ -n "$bin" ] || die "no native codex binary under $dir/npm/node_modules"
  ln -sf "$bin" "$dir/apply_patch"
fi

if [ ! -x "$dir/venv/bin/python" ] || ! "$dir/venv/bin/python" -c 'import agents.apply_diff' 2>/dev/null; then
  echo "installing openai-agents into $dir/venv" >&2
  python3 -m venv "$dir/venv" || { apt_need python3-venv; python3 -m venv "$dir/venv"; }
  "$dir/venv/bin/pip" install --quiet openai-agents >&2 || die "pip install openai-agents failed"
fi

echo "APPLY_PATCH=$dir/apply_patch"
echo "AGENTS_PY=$dir/venv/bin/python"
