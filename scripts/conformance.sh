#!/usr/bin/env bash
# Conformance in a root that has nothing but a static busybox and as-edit:
# no python3, no coreutils. The cases are the folders under tests/scenarios
# (the same ones `cargo test --test scenarios` runs). Each runs twice in the
# root's /work: through `/bin/sh -c '...'` with host-style quoting, and with
# no shell at all (`/opt/as-edit/as-edit ...` exec'd directly), both entered
# with `unshare --root ROOT --wd /work` (a chroot that can set the working
# directory). aarch64 runs under qemu-aarch64-static copied into the root
# (no binfmt registration needed).
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
scratch=""
trap 'rm -rf "$root" $scratch' EXIT
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

# The cases are the scenario folders that `cargo test --test scenarios` runs
# (format: tests/scenarios/README.md); this script only reads them.
scenarios=tests/scenarios
mkdir -p "$root/dev"
mknod -m 666 "$root/dev/null" c 1 3 # for the /dev/null scenario; nothing else in /dev
scratch=$(mktemp -d /tmp/as-edit-conformance-expect.XXXXXX)

# POSIX single-quote quoting, as the host library does it.
q() { local s=${1//\'/\'\\\'\'}; printf "'%s'" "$s"; }

# decode NAME: %XX-encoded name → bytes (encoded names hold no '\').
decode() { printf '%b' "${1//%/\\x}"; }

# expand SCEN TEXT: {DIR}, {b64:NAME}, {file:NAME}; any other '{' is literal.
expand() {
  local scen=$1 s=$2 out="" pre tok val
  while [[ $s == *'{'* ]]; do
    pre=${s%%'{'*}
    s=${s#*'{'}
    tok=${s%%'}'*}
    if [[ $s != *'}'* ]]; then tok=""; fi
    case $tok in
      DIR) val=/work ;;
      b64:*) val=$(base64 -w0 <"$scen/${tok#b64:}") ;;
      file:*) val=$(cat "$scen/${tok#file:}"; printf x); val=${val%x} ;;
      *) out+="$pre{"; continue ;;
    esac
    out+="$pre$val"
    s=${s#*'}'}
  done
  printf '%s' "$out$s"
}

# case_values SCEN KEY: the values of KEY lines in SCEN/case.
case_values() { sed -n "s/^$2:[[:space:]]*//p" "$1/case"; }

# real_path DEST ENCODED: DEST/ENCODED with every component decoded.
real_path() {
  local out=$1 part parts
  IFS=/ read -ra parts <<<"$2"
  for part in "${parts[@]}"; do out+=/$(decode "$part"; printf x); out=${out%x}; done
  printf '%s' "$out"
}

# materialize SCEN TREE DEST: TREE's entries (names %XX-decoded), then the
# case's dir:, fifo: and mode: lines, as tests/scenarios.rs does.
materialize() {
  local scen=$1 tree=$2 dest=$3 rel path m
  if [ -d "$tree" ]; then
    while IFS= read -r -d '' rel; do
      rel=${rel#./}
      path=$(real_path "$dest" "$rel"; printf x); path=${path%x}
      if [ -L "$tree/$rel" ]; then ln -s "$(readlink "$tree/$rel")" "$path"
      elif [ -d "$tree/$rel" ]; then mkdir -m 755 "$path"
      else cat "$tree/$rel" >"$path" && chmod 644 "$path"
      fi
    done < <(cd "$tree" && find . -mindepth 1 -print0 | sort -z)
  fi
  while IFS= read -r rel; do
    path=$(real_path "$dest" "$rel"; printf x); mkdir -m 755 "${path%x}"
  done < <(case_values "$scen" dir)
  while IFS= read -r rel; do
    path=$(real_path "$dest" "$rel"; printf x); mkfifo -m 644 "${path%x}"
  done < <(case_values "$scen" fifo)
  while read -r rel m; do
    path=$(real_path "$dest" "$rel"; printf x); chmod "$m" "${path%x}"
  done < <(case_values "$scen" mode)
}

# manifest DIR [inodes]: one line per entry, path in hex, kind, mode, content.
manifest() {
  local dir=$1 with_ino=${2:-} rel
  (cd "$dir" && find . -mindepth 1 -print0 | sort -z | while IFS= read -r -d '' rel; do
    printf '%s ' "$(printf '%s' "${rel#./}" | od -An -tx1 | tr -d ' \n')"
    if [ -L "$rel" ]; then printf 'link %s' "$(readlink "$rel" | od -An -tx1 | tr -d ' \n')"
    elif [ -d "$rel" ]; then printf 'dir %s' "$(stat -c %a "$rel")"
    elif [ -p "$rel" ]; then printf 'fifo %s' "$(stat -c %a "$rel")"
    elif [ -f "$rel" ]; then printf 'file %s %s' "$(stat -c %a "$rel")" "$(sha256sum <"$rel" | cut -c1-64)"
    else printf 'other'
    fi
    [ -n "$with_ino" ] && printf ' %s' "$(stat -c %i "$rel")"
    printf '\n'
  done)
}

# run_case SCEN WAY: one scenario, one way (sh or argv), every assertion.
run_case() {
  local scen=$1 way=$2 name want_rc rc=0 line
  name=$(basename "$scen")
  want_rc=$(case_values "$scen" exit)
  rm -rf "$root/work" "$scratch/expect" && mkdir -m 755 "$root/work" "$scratch/expect"
  materialize "$scen" "$scen/before" "$root/work"
  if [ -d "$scen/after" ]; then materialize "$scen" "$scen/after" "$scratch/expect"
  else materialize "$scen" "$scen/before" "$scratch/expect"; fi
  local args=()
  while IFS= read -r line; do
    line=$(expand "$scen" "$line"; printf x)
    args+=("${line%x}")
  done <"$scen/args"
  local stdin=/dev/null
  [ -f "$scen/stdin" ] && stdin=$scen/stdin
  local before
  before=$(manifest "$root/work" ino)
  if [ "$way" = sh ]; then
    local cmd="${runner}$(q "$helper")"
    for a in "${args[@]}"; do cmd+=" $(q "$a")"; done
    unshare --root="$root" --wd=/work /bin/sh -c "$cmd" <"$stdin" >"$scratch/out" 2>"$scratch/err" || rc=$?
  else
    # shellcheck disable=SC2086
    unshare --root="$root" --wd=/work $runner"$helper" "${args[@]}" <"$stdin" >"$scratch/out" 2>"$scratch/err" || rc=$?
  fi
  expand "$scen" "$(cat "$scen/expected"; printf x)" >"$scratch/want"
  truncate -s -1 "$scratch/want" # the marker
  if ! cmp -s "$scratch/out" "$scratch/want"; then bad "$name [$way]: got '$(cat "$scratch/out")', want '$(cat "$scratch/want")'"; return; fi
  if [ -s "$scratch/err" ]; then bad "$name [$way]: stderr '$(cat "$scratch/err")'"; return; fi
  if [ "$rc" != "$want_rc" ]; then bad "$name [$way]: exit $rc, want $want_rc"; return; fi
  if [ "$(manifest "$root/work")" != "$(manifest "$scratch/expect")" ]; then
    bad "$name [$way]: directory differs: $(diff <(manifest "$root/work") <(manifest "$scratch/expect") | tr '\n' ' ')"; return
  fi
  local after path kind rest ino a_kind a_rest a_ino
  after=$(manifest "$root/work" ino)
  while read -r path kind rest; do
    ino=${rest##* } rest=${rest% *}
    read -r _ a_kind a_rest < <(grep "^$path " <<<"$after") || true
    a_ino=${a_rest##* } a_rest=${a_rest% *}
    if [ "$kind $rest" = "$a_kind $a_rest" ] && [ "$ino" != "$a_ino" ]; then bad "$name [$way]: an unchanged entry has a new inode"; return; fi
    if [ "$kind" = file ] && [ "$kind $rest" != "$a_kind $a_rest" ] && [ "$ino" = "$a_ino" ]; then bad "$name [$way]: a file changed in place"; return; fi
  done <<<"$before"
  ok "$name [$way]"
}

count=0
for scen in "$scenarios"/[0-9][0-9][0-9]-*/; do
  scen=${scen%/}
  count=$((count + 1))
  ways=$(case_values "$scen" ways)
  for way in ${ways:-sh argv}; do run_case "$scen" "$way"; done
done
[ "$count" -gt 0 ] || die "no scenario folders under $scenarios"

# shellcheck disable=SC2086
ver=$(unshare --root="$root" --wd=/ $runner"$helper" --version 2>&1) || true
if [ "$ver" = "as-edit $(pkg_version) (protocol 4; $arch-unknown-linux-musl)" ]; then ok "--version names $arch-unknown-linux-musl"; else bad "--version: $ver"; fi
if chroot "$root" /bin/sh -c 'command -v python3' >/dev/null 2>&1 || [ -n "$(find "$root" -name 'python*' -print -quit)" ]; then
  bad "python3 is absent from the root"
else
  ok "python3 is absent from the root"
fi
echo "conformance of $bin ($arch-unknown-linux-musl)"
echo "conformance: $pass passed, $fail failed"
[ "$fail" = 0 ]
