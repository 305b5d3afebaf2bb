#!/usr/bin/env bash
# Conformance in a root that has nothing but a static busybox and as-edit:
# no python3, no coreutils. Each case runs twice: through `chroot ROOT
# /bin/sh -c '...'` with host-style quoting, and with no shell at all
# (`chroot ROOT /opt/as-edit/as-edit ...`). aarch64 runs under
# qemu-aarch64-static copied into the root (no binfmt registration needed).
# Usage: scripts/conformance.sh [BINARY] [--arch x86_64|aarch64]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

arch=x86_64
bin=""
while (($#)); do
  case "$1" in
    --arch) arch=${2:?--arch needs x86_64 or aarch64}; shift 2 ;;
    --arch=*) arch=${1#--arch=}; shift ;;
    *) bin=$1; shift ;;
  esac
done
case "$arch" in x86_64|aarch64) ;; *) die "--arch takes x86_64 or aarch64" ;; esac
[ "$(id -u)" = 0 ] || die "conformance needs root (chroot); run as root"
apt_need busybox-static
[ "$arch" = aarch64 ] && apt_need qemu-user-static
if [ -z "$bin" ]; then
  scripts/build-static.sh "$arch-unknown-linux-musl" >/dev/null
  bin="dist/as-edit-$(pkg_version)-$arch-unknown-linux-musl"
fi
[ -x "$bin" ] || die "no executable binary at $bin"

root=$(mktemp -d /tmp/as-edit-conformance.XXXXXX)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/opt/as-edit" "$root/work"
cp /bin/busybox "$root/bin/busybox"
for tool in sh ls cat; do ln -s busybox "$root/bin/$tool"; done
cp "$bin" "$root/opt/as-edit/as-edit"
chmod 755 "$root/opt/as-edit/as-edit"
runner=""
if [ "$arch" = aarch64 ]; then
  cp /usr/bin/qemu-aarch64-static "$root/opt/qemu-aarch64-static"
  runner="/opt/qemu-aarch64-static "
fi
helper="/opt/as-edit/as-edit"

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
b64() { printf '%s' "$1" | base64 -w0; }

# run MODE ARGS... : runs the helper in the root via sh -c or plain argv.
run() {
  local mode=$1; shift
  if [ "$mode" = sh ]; then
    local cmd="${runner}$(q "$helper")"
    for a in "$@"; do cmd+=" $(q "$a")"; done
    chroot "$root" /bin/sh -c "$cmd"
  else
    # shellcheck disable=SC2086
    chroot "$root" $runner"$helper" "$@"
  fi
}

# check NAME MODE EXPECTED_LINE EXPECTED_RC FILE EXPECTED_BYTES ARGS...
check() {
  local name=$1 mode=$2 want=$3 want_rc=$4 file=$5 want_bytes=$6; shift 6
  local out rc=0
  out=$(run "$mode" "$@" 2>&1) || rc=$?
  local got_bytes
  got_bytes=$(od -An -c "$root$file" 2>/dev/null | tr -s ' \n' ' ')
  if [ "$out" != "__RESULT__$want" ]; then bad "$name [$mode]: got '$out', want '__RESULT__$want'"; return; fi
  if [ "$rc" != "$want_rc" ]; then bad "$name [$mode]: exit $rc, want $want_rc"; return; fi
  if [ "$got_bytes" != "$(printf '%b' "$want_bytes" | od -An -c | tr -s ' \n' ' ')" ]; then bad "$name [$mode]: file bytes $got_bytes"; return; fi
  local extra
  extra=$(ls -A "$root/work" | grep -c '^\.' || true)
  if [ "$extra" != 0 ]; then bad "$name [$mode]: temp left in /work"; return; fi
  ok "$name [$mode]"
}

for mode in sh argv; do
  rm -rf "$root/work" && mkdir -p "$root/work/real" "$root/work/links"
  printf 'hello world\n' > "$root/work/plain.txt"
  check "plain edit" $mode '{"count":1}' 0 /work/plain.txt 'hello there\n' \
    -- /work/plain.txt "$(b64 world)" "$(b64 there)"
  printf 'a\r\nb\r\nc\r\n' > "$root/work/crlf.txt"
  check "CRLF normalized" $mode '{"count":1}' 0 /work/crlf.txt 'a\nB\nc\n' \
    -- /work/crlf.txt "$(b64 $'b\n')" "$(b64 $'B\r\n')" false
  printf 'x-x-x' > "$root/work/all.txt"
  check "replace-all count" $mode '{"count":3}' 0 /work/all.txt 'y-y-y' \
    -- /work/all.txt "$(b64 x)" "$(b64 y)" true
  check "string_not_found" $mode '{"error":"string_not_found"}' 1 /work/all.txt 'y-y-y' \
    -- /work/all.txt "$(b64 zzz)" "$(b64 q)"
  check "multiple_occurrences" $mode '{"error":"multiple_occurrences","count":3}' 1 /work/all.txt 'y-y-y' \
    -- /work/all.txt "$(b64 y)" "$(b64 q)"
  check "file_not_found" $mode '{"error":"file_not_found","detail":"/work/missing.txt does not exist"}' 1 /work/all.txt 'y-y-y' \
    -- /work/missing.txt "$(b64 y)" "$(b64 q)"
  printf 'old\n' > "$root/work/real/t.txt"
  ln -s ../real/t.txt "$root/work/links/l.txt"
  check "symlink written through" $mode '{"count":1}' 0 /work/real/t.txt 'new\n' \
    -- /work/links/l.txt "$(b64 old)" "$(b64 new)"
  if [ -L "$root/work/links/l.txt" ]; then ok "symlink preserved [$mode]"; else bad "symlink preserved [$mode]"; fi
  printf 'm\n' > "$root/work/mode.txt"; chmod 4751 "$root/work/mode.txt"
  check "mode edit" $mode '{"count":1}' 0 /work/mode.txt 'n\n' -- /work/mode.txt "$(b64 m)" "$(b64 n)"
  if [ "$(stat -c %a "$root/work/mode.txt")" = 4751 ]; then ok "mode preserved [$mode]"; else bad "mode preserved [$mode]: $(stat -c %a "$root/work/mode.txt")"; fi
  printf 'caf\xe9\n' > "$root/work/latin1.txt"
  check "non-UTF-8 refused" $mode '{"error":"read_failed","detail":"/work/latin1.txt is not valid UTF-8: invalid continuation byte at byte offset 3"}' 1 /work/latin1.txt 'caf\351\n' \
    -- /work/latin1.txt "$(b64 caf)" "$(b64 x)"
  check "invalid_argument" $mode '{"error":"invalid_argument","detail":"OLD is empty"}' 2 /work/plain.txt 'hello there\n' \
    -- /work/plain.txt "" ""
done

ver=$(run argv --version 2>&1) || true
if [ "$ver" = "as-edit $(pkg_version) (protocol 1; $arch-unknown-linux-musl)" ]; then ok "--version names $arch-unknown-linux-musl"; else bad "--version: $ver"; fi
if chroot "$root" /bin/sh -c 'command -v python3' >/dev/null 2>&1 || [ -n "$(find "$root" -name 'python*' -print -quit)" ]; then
  bad "python3 is absent from the root"
else
  ok "python3 is absent from the root"
fi
echo "conformance of $bin ($arch-unknown-linux-musl)"
echo "conformance: $pass passed, $fail failed"
[ "$fail" = 0 ]
