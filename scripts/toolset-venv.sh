#!/usr/bin/env bash
# Makes (once) the venv holding the pinned `anthropic` whose reference tools
# `--toolset agent_toolset_20260401` follows, and prints its python's path.
# Used by scripts/toolset-diff.sh and scripts/docker-test.sh. A fresh machine
# gets python3-venv from apt; nothing is ever removed.
# Env: PYTHON (a Python 3.11; default python3), TOOLSET_VENV (default
# target/toolset-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

# The version whose texts the toolset follows (README, "Anthropic's toolset").
ANTHROPIC_VERSION=2.17.0

PY=${PYTHON:-python3}
"$PY" -c 'import venv, ensurepip' 2>/dev/null || apt_need python3-venv >&2
[ "$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" = 3.11 ] \
  || die "toolset: needs Python 3.11 (set PYTHON): the reference's glob is 3.11's pathlib"
venv=${TOOLSET_VENV:-target/toolset-venv}
[ -x "$venv/bin/python" ] || "$PY" -m venv "$venv" >&2
"$venv/bin/python" -c "import anthropic, sys; sys.exit(anthropic.__version__ != '$ANTHROPIC_VERSION')" 2>/dev/null \
  || "$venv/bin/pip" install -q "anthropic==$ANTHROPIC_VERSION" >&2
echo "$(cd "$venv" && pwd)/bin/python"  # not realpath: that leaves the venv
