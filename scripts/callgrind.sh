#!/usr/bin/env bash
# A regression guard that wall-clock noise cannot hide: instructions counted
# by `valgrind --tool=callgrind` (repeatable for the same binary and inputs)
# against the budgets in scripts/bench/callgrind-budgets.txt.
#   small          instructions for one edit of a 4 KiB file (start-up included)
#   large_per_mib  instructions per MiB of a one-edit LF file
#   crlf_per_mib   the same for a CRLF file
#   many_per_mib   the same for a dense replace-all (a match every ~100 bytes)
#   hints_refusal  instructions for a --hints refusal of a 1 MiB source file
# Per-MiB counts are (count at 8 MiB - count at 4 MiB) / 4: the fixed cost
# (exec, start-up, argument decoding, the result line) cancels out, and the
# files stay small enough for valgrind to run in seconds.
# Usage: scripts/callgrind.sh [--update] [--bin PATH]
#   --update  rewrites the budgets file as measured + 15% (commit the result)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

update=0 bin=""
while (($#)); do
  case "$1" in
    --update) update=1 ;;
    --bin) bin=$2; shift ;;
    *) die "unknown argument $1" ;;
  esac
  shift
done
apt_need valgrind
if [ -z "$bin" ]; then
  scripts/build-static.sh x86_64-unknown-linux-musl >/dev/null
  bin="$PWD/dist/as-edit-$(pkg_version)-x86_64-unknown-linux-musl"
fi
[ -x "$bin" ] || die "no binary at $bin"
budgets=scripts/bench/callgrind-budgets.txt
headroom=15

work=$(mktemp -d /var/tmp/as-edit-callgrind.XXXXXX)
trap 'rm -rf "$work"' EXIT

# make_file PATH BYTES LINE : LINE repeated to BYTES - 64, then the needle.
make_file() {
  local path=$1 bytes=$2 line=$3
  printf '%b' "$line" > "$path.unit"
  while [ "$(stat -c %s "$path.unit")" -lt "$bytes" ]; do
    cat "$path.unit" "$path.unit" > "$path.twice" && mv "$path.twice" "$path.unit"
  done
  head -c $((bytes - 64)) "$path.unit" > "$path"
  printf '\nneedle_near_the_end = 1\n' >> "$path"
  rm -f "$path.unit"
}

b64() { printf '%s' "$1" | base64 -w0; }
# counted FILE ARGS... : runs the binary under callgrind on a copy of FILE
# ($work/t.txt, named by the ARGS) and prints the instruction count; the
# result line is left in $work/line, the edited copy in $work/t.txt.
counted() {
  local f=$1 out n
  shift
  cp "$f" "$work/t.txt"
  # Refusals exit 1 by design: the callers check the line instead.
  # The commit's link and rename are a vfork child's (src/fs/window.rs),
  # which valgrind runs as a fork: only the edit's own count is kept (the
  # child's three calls are a few hundred instructions).
  out=$(valgrind --tool=callgrind --child-silent-after-fork=yes --callgrind-out-file="$work/cg.out" \
    "$bin" "$@" 2>&1 >"$work/line") || true
  n=$(sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' <<<"$out")
  [ -n "$n" ] || die "no instruction count in valgrind's output: $out"
  echo "$n"
}
# instructions FILE : the one-edit count; checks the line and the bytes.
instructions() {
  local f=$1 n
  n=$(counted "$f" -- "$work/t.txt" "$(b64 'needle_near_the_end = 1')" "$(b64 'needle_near_the_end = 2')" false)
  printf '__RESULT__{"count":1}\n' | cmp -s - "$work/line" || die "unexpected output: $(cat "$work/line")"
  # The edit itself, byte for byte: the input with line endings normalized
  # and the one needle changed (so a binary that only prints the line fails).
  [ "$(sha256sum < "$work/t.txt")" = "$(tr -d '\r' < "$f" \
    | sed 's/^needle_near_the_end = 1$/needle_near_the_end = 2/' | sha256sum)" ] \
    || die "the edited file of $(basename "$f") is not the expected bytes"
  echo "$n"
}
# dense FILE : a replace-all of `tok` (about one every 100 bytes) by `TOKEN`.
dense() {
  local f=$1 n want
  n=$(counted "$f" -- "$work/t.txt" "$(b64 tok)" "$(b64 TOKEN)" true)
  want=$(grep -o tok "$f" | wc -l)
  printf '__RESULT__{"count":%s}\n' "$want" | cmp -s - "$work/line" || die "unexpected output: $(cat "$work/line")"
  [ "$(sha256sum < "$work/t.txt")" = "$(sed 's/tok/TOKEN/g' < "$f" | sha256sum)" ] \
    || die "the edited file of $(basename "$f") is not the expected bytes"
  echo "$n"
}
# hinted FILE : a --hints refusal (three lines of the file, one word changed:
# no normalized kind holds, so the whole finder runs, `similar` included).
hinted() {
  local f=$1 n
  n=$(counted "$f" --hints -- "$work/t.txt" "$(b64 "$(sed -n '301p;302s/beta/gamma/p;303p' "$f")")" "$(b64 QQ)" false)
  case "$(cat "$work/line")" in
    '__RESULT__{"error":"string_not_found",'*'"kind":"similar"'*) ;;
    *) die "no similar hint: $(cat "$work/line")" ;;
  esac
  cmp -s "$f" "$work/t.txt" || die "the refusal changed the file"
  echo "$n"
}

lf='    let value = compute(alpha, beta); // some ordinary source text\n'
crlf='    let value = compute(alpha, beta); // some ordinary source text\r\n'
many='    let value = compute(alpha, beta); // tok: one short occurrence in about every hundred bytes...\n'
make_file "$work/small" 4096 "$lf"
make_file "$work/lf4" $((4 << 20)) "$lf"
make_file "$work/lf8" $((8 << 20)) "$lf"
make_file "$work/crlf4" $((4 << 20)) "$crlf"
make_file "$work/crlf8" $((8 << 20)) "$crlf"
make_file "$work/many4" $((4 << 20)) "$many"
make_file "$work/many8" $((8 << 20)) "$many"
# 1 MiB of distinct source lines (as scripts/bench.sh's hints case).
awk 'BEGIN { for (i = 0; n < 1048576; i++) {
  l = sprintf("    let value_%d = compute_%d(alpha.field_%d, beta + %d)?; // step %d\n", i, i % 97, i % 13, i, i)
  printf "%s", l; n += length(l) } }' > "$work/source"

declare -A measured
measured[small]=$(instructions "$work/small")
measured[large_per_mib]=$((($(instructions "$work/lf8") - $(instructions "$work/lf4")) / 4))
measured[crlf_per_mib]=$((($(instructions "$work/crlf8") - $(instructions "$work/crlf4")) / 4))
measured[many_per_mib]=$((($(dense "$work/many8") - $(dense "$work/many4")) / 4))
measured[hints_refusal]=$(hinted "$work/source")
cases=(small large_per_mib crlf_per_mib many_per_mib hints_refusal)
for c in "${cases[@]}"; do
  # A fixed cost only (no work per byte) means the binary did not edit.
  [ "${measured[$c]}" -gt 0 ] || die "$c measured ${measured[$c]} instructions: not a real edit"
done

if ((update)); then
  {
    echo "# Instruction budgets for scripts/callgrind.sh (x86_64 static release binary)."
    echo "# Written by scripts/callgrind.sh --update: measured + ${headroom}%. One line per"
    echo "# case, so lowering a budget after an optimisation is a one-line commit."
    for c in "${cases[@]}"; do
      echo "$c $((measured[$c] * (100 + headroom) / 100))"
    done
  } > "$budgets"
  echo "wrote $budgets:"
  grep -v '^#' "$budgets"
  exit 0
fi

[ -f "$budgets" ] || die "no $budgets: run scripts/callgrind.sh --update"
fail=0
printf '%-14s %14s %14s %8s\n' case measured budget used
for c in "${cases[@]}"; do
  b=$(awk -v c="$c" '$1 == c { print $2 }' "$budgets")
  [ -n "$b" ] || die "$budgets has no budget for $c"
  printf '%-14s %14s %14s %7s%%\n' "$c" "${measured[$c]}" "$b" "$((measured[$c] * 100 / b))"
  if [ "${measured[$c]}" -gt "$b" ]; then
    echo "error: $c takes ${measured[$c]} instructions, over its budget of $b" >&2
    fail=1
  fi
done
((fail == 0)) || die "instruction budgets exceeded (if the cost is intended: scripts/callgrind.sh --update, and say why in the commit)"
echo "ok: every instruction count is within its budget"
