#!/usr/bin/env bash
# The AgentScope adapter (examples/agentscope/AsEditFilesystem.java)
# compiled against the stand-ins in tests/agentscope/ and run by its driver:
# every filesystem method on the toolset's awkward trees, compared with the
# oracle of LocalFilesystem's semantics; once with the system's sh, once with
# PATH holding only busybox (the backend's sh is then busybox sh).
# Installs a JDK and Jackson on a fresh Debian machine (apt_need: never
# removing or downgrading anything). Usage: scripts/java-test.sh [BINARY]
# (default: $AS_EDIT_STATIC_BIN, else a release build).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

command -v javac >/dev/null || apt_need default-jdk-headless
apt_need libjackson2-databind-java busybox-static
bin=${1:-${AS_EDIT_STATIC_BIN:-}}
if [ -z "$bin" ]; then
  cargo build --quiet --release
  bin="${CARGO_TARGET_DIR:-target}/release/as-edit"
fi
bin=$(readlink -f "$bin")
[ -x "$bin" ] || die "no as-edit binary at $bin"

jars=/usr/share/java/jackson-databind.jar:/usr/share/java/jackson-core.jar:/usr/share/java/jackson-annotations.jar
out=$(mktemp -d)
bb=$(mktemp -d)
trap 'rm -rf "$out" "$bb"' EXIT
# shellcheck disable=SC2046 # the file list: paths without spaces
javac -Xlint:all -Werror -d "$out" -cp "$jars" \
  $(find tests/agentscope -name '*.java' | sort) examples/agentscope/AsEditFilesystem.java

# The trees on a tmpfs where there is one (thousands of small files).
tmp=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && tmp=/dev/shm
java=$(readlink -f "$(command -v java)")
busybox=$(command -v busybox) || die "busybox-static is not installed"
for a in sh mkfifo printf rm chmod; do ln -s "$busybox" "$bb/$a"; done

status=0
LC_ALL=C.UTF-8 AS_EDIT_JAVA_TMP=$tmp "$java" -cp "$out:$jars" AsEditDriver "$bin" || status=1
LC_ALL=C.UTF-8 AS_EDIT_JAVA_TMP=$tmp PATH=$bb "$java" -cp "$out:$jars" AsEditDriver "$bin" || status=1
exit $status
