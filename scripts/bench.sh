#!/usr/bin/env bash
# Side-by-side benchmark: as-edit vs the python3 status quo vs the physical
# bounds (a full cp+mv rewrite of the file; a static no-op exec). Then the
# copy-bound cases again, timed alternating (scripts/bench/alternate.py).
# Usage: scripts/bench.sh [--quick] [--huge] [--diff-only] [--bin PATH] | --install | --docker
#   --quick      tiny files and few runs: proves the benchmark works (CI)
#   --huge       adds the 1 GiB case (time and memory only)
#   --diff-only  only the diff case: --report --diff against --report alone
#                on the large file (time ratio target <= 2, peak RSS <= 4 MiB)
#   --install    only the install-over-exec table (see install_bench below)
#   --hints-only only the hints case: a --hints refusal of a 1 MiB source file
#                against the plain refusal (target <= 3x), peak RSS <= 16 MiB
#   --files-only only the files case: ten small edits in ten files as one
#                transaction against ten single-file execs and against one
#                (target <= 2x one exec), peak RSS <= 4 MiB
#   --patch-only only the patch case: a 5-file, 10-chunk V4A patch over
#                copies of source files, as-edit (--patch, and its apply_patch
#                mode) against Codex's apply_patch binary (scripts/patch-refs.sh
#                installs it; without it the Codex side is skipped, saying why)
#                (target <= 0.3x Codex by direct exec: an argv, no shell, as
#                exec APIs run it; the sh -c figure beside it), peak RSS
#   --large-only only the large case (one edit near the end of 64 MiB)
#                against cp+mv, and cp + write-back + mv (xfs_io's
#                sync_range, as as-edit writes its temp back), timed
#                alternating with CPU times (user +
#                sys: on a loaded machine they compare where wall times
#                drift); --also PATH (repeatable) adds other binaries to the
#                same alternation, to compare builds; --iters N (default 30)
#   --long-old-only only the long-OLD case: a --stdin refusal of a 16 MiB OLD
#                on the large file against a short OLD's, and the same OLD
#                on a one-line file (the request's own cost): the search's
#                share is long - one-line
#   --toolset-only only the toolset case on the Rust standard
#                library's source (rust-src): glob '*.rs' against fd -g,
#                rg --files -g and AgentScope's find | sort | while read;
#                stat; stat pipeline; a literal grep against rg -F and
#                grep -rF; a regex holding a literal against rg (targets:
#                <= 1.5x fd, >= 100x the pipeline; <= 1.5x rg -F; <= 3x rg)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
# --docker [--quick] [--bin PATH]: the docker exec timing table instead (scripts/bench/docker.sh).
[ "${1:-}" = --docker ] && { shift; exec scripts/bench/docker.sh "$@"; }

quick=0 huge=0 diff_only=0 hints_only=0 files_only=0 patch_only=0 long_old_only=0 toolset_only=0 bin="" install=0
large_only=0 also=() iters=30
while (($#)); do
  case "$1" in
    --install) install=1 ;;
    --quick) quick=1 ;;
    --huge) huge=1 ;;
    --diff-only) diff_only=1 ;;
    --hints-only) hints_only=1 ;;
    --files-only) files_only=1 ;;
    --patch-only) patch_only=1 ;;
    --long-old-only) long_old_only=1 ;;
    --large-only) large_only=1 ;;
    --also) also+=("$2"); shift ;;
    --iters) iters=$2; shift ;;
    --toolset-only) toolset_only=1 ;;
    --bin) bin=$2; shift ;;
    *) die "unknown argument $1" ;;
  esac
  shift
done

# --- install over exec -------------------------------------------------------
# For each architecture's dist/ binary and each transfer the Editor can pick
# (by what a busybox root offers: only sh builtins and busybox's own
# applets; + base64; + gzip; + base64 and gzip), installs through
# Editor::ensure_helper and prints the bytes sent and the exec calls, every
# exec the Editor makes counted: the probe (version check and tool probes in
# one command), the data commands (the first creates the temp, the last also
# decompresses, moves into place and runs --version).
install_bench() {
  [ "$(id -u)" = 0 ] || die "--install builds chroots: run as root"
  apt_need busybox-static qemu-user-static
  scripts/build-static.sh >/dev/null
  cargo build --quiet --release --example install_cost
  local cost=target/release/examples/install_cost version arch bin root tools extra qemu line
  version=$(pkg_version)
  echo "| arch | binary bytes | transfer | bytes sent | exec calls | target |"
  echo "| --- | ---: | --- | ---: | ---: | ---: |"
  for arch in x86_64 aarch64; do
    bin="dist/as-edit-$version-$arch-unknown-linux-musl"
    for tools in "printf:" "base64:base64" "gzip:gzip" "gzip:base64 gzip"; do
      extra=${tools#*:}
      root=$(mktemp -d /var/tmp/as-edit-install.XXXXXX)
      mkdir -p "$root/bin" "$root/opt"
      cp /bin/busybox "$root/bin/busybox"
      for t in sh chmod mv rm $extra; do ln -s busybox "$root/bin/$t"; done
      qemu=()
      if [ "$arch" = aarch64 ] && [ "$(uname -m)" != aarch64 ]; then
        cp /usr/bin/qemu-aarch64-static "$root/opt/qemu-aarch64-static"
        qemu=(/opt/qemu-aarch64-static)
      fi
      line=$("$cost" "$root" "$bin" "${qemu[@]}") || die "install into a ${tools%%:*} root failed"
      rm -rf "$root"
      local transfer=${line#transfer=}; transfer=${transfer%% *}
      local execs=${line#*execs=}; execs=${execs%% *}
      local bytes=${line#*bytes=}
      local target=""
      case "$transfer" in printf) target="≤ 16" ;; base64) target="≤ 8" ;; esac
      echo "| $arch | $(stat -c %s "$bin") | $transfer | $bytes | $execs | $target |"
    done
  done
}
if ((install)); then
  install_bench
  exit 0
fi
# -----------------------------------------------------------------------------

apt_need hyperfine busybox-static time
if [ -z "$bin" ]; then
  scripts/build-static.sh x86_64-unknown-linux-musl >/dev/null
  bin="$PWD/dist/as-edit-$(pkg_version)-x86_64-unknown-linux-musl"
fi
# Absolute: the patch case runs it from inside its tree.
bin=$(realpath "$bin")
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3) || die "python3 is needed for the status-quo side"

work=$(mktemp -d /var/tmp/as-edit-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
b64() { printf '%s' "$1" | base64 -w0; }
# POSIX single-quoting (what hyperfine -N and sh both parse).
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

# The status quo exactly as a host sends it: the script in a quoted heredoc.
status_quo_cmd() { # PATH OLD_B64 NEW_B64 ALL
  printf "%s - '%s' '%s' '%s' %s >/dev/null <<'AS_EDIT_BENCH_EOF'\n%s\nAS_EDIT_BENCH_EOF" \
    "$py" "$1" "$2" "$3" "$4" "$(cat scripts/bench/status_quo.py)"
}

runs=(--warmup 3 --min-runs 10)
((quick)) && runs=(--warmup 1 --runs 3)
scale=1
((quick)) && scale=64  # quick mode: files 64x smaller

# make_file NAME BYTES KIND : writes $work/NAME.orig
make_file() {
  local name=$1 bytes=$2 kind=$3
  "$py" - "$work/$name.orig" "$bytes" "$kind" <<'PY'
import sys
path, size, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
line = {"lf": "    let value = compute(alpha, beta); // some ordinary source text\n",
        "crlf": "    let value = compute(alpha, beta); // some ordinary source text\r\n",
        "many": "    let value = compute(alpha, beta); // tok: one short occurrence in about every hundred bytes...\n"}[kind]
body = (line * (size // len(line) + 1))[: size - 64]
tail = "\nneedle_near_the_end = 1\n" if kind != "many" else "\n"
with open(path, "w", newline="") as f:
    f.write(body + tail)
PY
}

declare -A median
report=()
# bench CASE OLD NEW ALL [noop]  (case "refuse": OLD is absent, the edit must be refused)
bench() {
  local case=$1 old=$2 new=$3 all=$4 noop=${5:-}
  local f="$work/$case.txt" csv="$work/$case.csv"
  local o n
  o=$(b64 "$old"); n=$(b64 "$new")
  local cmds=(
    -n as-edit "sh -c \"'$bin' -- '$f' '$o' '$n' $all >/dev/null\""
    -n status-quo "sh -c $(q "$(status_quo_cmd "$f" "$o" "$n" "$all")")"
    -n copy "sh -c \"cp '$f' '$f.tmp' && mv '$f.tmp' '$f'\""
  )
  [ -n "$noop" ] && cmds+=(-n no-op "sh -c 'busybox true'")
  local ignore=()
  [ "$case" = refuse ] && ignore=(-i)  # both sides exit 1 by design
  # `sync` before every run (untimed): the dirty pages of earlier runs and
  # cases are written back then, not during whichever command runs next
  # (hyperfine runs each command's series in turn, so the writeback left by
  # the previous case fell on the first command, as-edit).
  hyperfine -N "${runs[@]}" "${ignore[@]}" --prepare "sh -c \"cp '$work/$case.orig' '$f' && sync\"" \
    --export-csv "$csv" "${cmds[@]}" >&2
  # Check that the edit really succeeds (or, for refuse, is refused) on this input.
  cp "$work/$case.orig" "$f"
  local line
  if [ "$case" = refuse ]; then
    line=$("$bin" -- "$f" "$o" "$n" "$all") && die "$case: as-edit edited: $line"
    [ "$line" = '__RESULT__{"error":"string_not_found"}' ] || die "$case: unexpected $line"
    cmp -s "$f" "$work/$case.orig" || die "$case: the file changed"
  else
    line=$("$bin" -- "$f" "$o" "$n" "$all") || die "$case: as-edit failed: $line"
  fi
  while IFS=, read -r name mean _ med _; do
    [ "$name" = command ] && continue
    median[$case/$name]=$med
  done <"$csv"
}

rss() { # CMD... -> peak RSS in KiB
  /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1
}

# target T : a line's target; in quick mode the figure beside it comes from
# files 64x smaller and a few runs, so the line says it proves nothing.
target() {
  if ((quick)); then
    echo "(target $1; quick mode: proves the bench runs, not the figure)"
  else
    echo "(target $1)"
  fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
ms() { awk -v a="$1" 'BEGIN { printf "%.2f", a * 1000 }'; }

# The diff case: the same one-line edit of the large file with --report
# --diff and with --report alone; the diff must cost <= 2x the time and
# stay within 4 MiB peak RSS.
diff_case() {
  local f="$work/large.txt" o n line
  o=$(b64 'needle_near_the_end = 1'); n=$(b64 'needle_near_the_end = 2')
  hyperfine -N "${runs[@]}" --prepare "sh -c \"cp '$work/large.orig' '$f' && sync\"" --export-csv "$work/diff.csv" \
    -n report "sh -c \"'$bin' --report -- '$f' '$o' '$n' false >/dev/null\"" \
    -n report-diff "sh -c \"'$bin' --report --diff -- '$f' '$o' '$n' false >/dev/null\"" >&2
  cp "$work/large.orig" "$f"
  line=$("$bin" --report --diff -- "$f" "$o" "$n" false) || die "diff: as-edit failed: $line"
  case "$line" in *'"diff":"---'*'+needle_near_the_end = 2'*) ;; *) die "diff: no diff in $line" ;; esac
  case "$line" in *diff_truncated*) die "diff: cut: $line" ;; esac
  while IFS=, read -r name mean _ med _; do
    [ "$name" = command ] && continue
    median[diff/$name]=$med
  done <"$work/diff.csv"
  cp "$work/large.orig" "$f"
  local rss_report rss_diff
  rss_report=$(rss "$bin" --report -- "$f" "$o" "$n" false)
  cp "$work/large.orig" "$f"
  rss_diff=$(rss "$bin" --report --diff -- "$f" "$o" "$n" false)
  echo
  echo "diff (large, one edit): --report $(ms "${median[diff/report]}") ms, --report --diff $(ms "${median[diff/report-diff]}") ms," \
    "ratio $(ratio "${median[diff/report-diff]}" "${median[diff/report]}") $(target '<= 2');" \
    "peak RSS --report ${rss_report} KiB, --report --diff ${rss_diff} KiB $(target '<= 4096')"
}

# --- files --------------------------------------------------------------
# Ten small edits in ten 4 KiB files: one {"files":[...]} transaction on
# --stdin, ten single-file execs, one single-file exec (each exec a fresh
# sh -c, as a host's exec API runs it). Targets: the transaction <= 2x one
# exec, peak RSS <= 4 MiB.
files_case() {
  local d="$work/files" i ops="" line
  mkdir -p "$d"
  for i in 0 1 2 3 4 5 6 7 8 9; do
    "$py" -c "import sys; sys.stdout.write(''.join('    let v%d = compute_$i(%d);\n' % (j, j) for j in range(80)))" >"$d/f$i.orig"
    ops="$ops${ops:+,}{\"op\":\"edit\",\"path\":\"$d/f$i.txt\",\"edits\":[{\"old\":\"compute_$i(40)\",\"new\":\"changed_$i(40)\"}]}"
  done
  printf '{"files":[%s]}' "$ops" >"$work/files.json"
  local prep="sh -c \"for i in 0 1 2 3 4 5 6 7 8 9; do cp '$d/f'\\\$i.orig '$d/f'\\\$i.txt; done; sync\""
  local ten="" o n
  for i in 0 1 2 3 4 5 6 7 8 9; do
    o=$(b64 "compute_$i(40)"); n=$(b64 "changed_$i(40)")
    ten="$ten sh -c \"'$bin' -- '$d/f$i.txt' '$o' '$n' false >/dev/null\";"
  done
  o=$(b64 "compute_0(40)"); n=$(b64 "changed_0(40)")
  hyperfine -N "${runs[@]}" --prepare "$prep" --export-csv "$work/files.csv" \
    -n transaction "sh -c \"'$bin' --stdin <'$work/files.json' >/dev/null\"" \
    -n ten-execs "sh -c '$ten'" \
    -n one-exec "sh -c \"'$bin' -- '$d/f0.txt' '$o' '$n' false >/dev/null\"" >&2
  for i in 0 1 2 3 4 5 6 7 8 9; do cp "$d/f$i.orig" "$d/f$i.txt"; done
  line=$("$bin" --stdin <"$work/files.json") || die "files: as-edit failed: $line"
  [ "$line" = '__RESULT__{"count":10,"files":10}' ] || die "files: unexpected $line"
  while IFS=, read -r name mean _ med _; do
    [ "$name" = command ] && continue
    median[files/$name]=$med
  done <"$work/files.csv"
  for i in 0 1 2 3 4 5 6 7 8 9; do cp "$d/f$i.orig" "$d/f$i.txt"; done
  local rss_txn
  rss_txn=$(/usr/bin/time -f %M "$bin" --stdin <"$work/files.json" 2>&1 >/dev/null | tail -n 1)
  echo
  echo "files (ten edits in ten 4 KiB files): transaction $(ms "${median[files/transaction]}") ms," \
    "ten execs $(ms "${median[files/ten-execs]}") ms, one exec $(ms "${median[files/one-exec]}") ms;" \
    "transaction / one exec $(ratio "${median[files/transaction]}" "${median[files/one-exec]}") $(target '<= 2')," \
    "ten execs / transaction $(ratio "${median[files/ten-execs]}" "${median[files/transaction]}");" \
    "peak RSS ${rss_txn} KiB $(target '<= 4096')"
}

# --- patch -----------------------------------------------------------------
# scripts/bench/patch.py's patch (5 files, 10 chunks, copies of source files)
# on a fresh copy before every run: as-edit --patch, as-edit as
# apply_patch, and Codex's apply_patch (the 315 MB static binary of npm
# @openai/codex), all reading the patch on stdin. Each is timed by direct
# exec, an argv with no shell, as hosts' exec APIs (Docker's, Kubernetes')
# run it, and through sh -c beside it, alternating (scripts/bench/exec.py).
# Both appliers must leave byte-identical trees. Target: <= 0.3x Codex by
# direct exec.
patch_case() {
  local d="$work/patch" t="$work/patch/t" line codex="" why=""
  mkdir -p "$d"
  "$py" scripts/bench/patch.py "$d"
  local refs=${AS_EDIT_PATCH_REFS:-$PWD/target/patch-refs} out
  if out=$(scripts/patch-refs.sh 2>"$d/refs.log"); then
    codex=$(sed -n 's/^APPLY_PATCH=//p' <<<"$out")
  fi
  [ -n "$codex" ] || codex="$refs/apply_patch"
  if [ ! -x "$codex" ]; then
    why="Codex's apply_patch is not installed and scripts/patch-refs.sh could not install it: $(tail -n 1 "$d/refs.log")"
    codex=""
  fi
  ln -sf "$bin" "$d/apply_patch"
  local cmds=(
    "as-edit=$(q "$bin") --patch"
    "as-edit-apply_patch=$(q "$d/apply_patch")"
    "sh/as-edit=sh -c $(q "cd '$t' && '$bin' --patch <'$d/patch.txt' >/dev/null")"
    "sh/as-edit-apply_patch=sh -c $(q "cd '$t' && '$d/apply_patch' <'$d/patch.txt' >/dev/null")"
  )
  [ -n "$codex" ] && cmds+=("codex=$(q "$codex")" "sh/codex=sh -c $(q "cd '$t' && '$codex' <'$d/patch.txt' >/dev/null")")
  local iters=20 name wall cpu failed
  ((quick)) && iters=3
  "$py" scripts/bench/exec.py "$iters" "$d/orig" "$t" "$d/patch.txt" "${cmds[@]}" >"$work/patch.out" \
    || die "scripts/bench/exec.py failed"
  while read -r name wall cpu failed; do
    [ "$failed" = 0 ] || die "patch: $name failed $failed of $iters runs"
    median[patch/$name]=$wall
    median[patch/cpu/$name]=$cpu
  done <"$work/patch.out"
  # Each side once more, checked: the result, and the same bytes.
  rm -rf "$t" && cp -r "$d/orig" "$t"
  line=$(cd "$t" && "$bin" --patch <"$d/patch.txt") || die "patch: as-edit failed: $line"
  [ "$line" = '__RESULT__{"count":10,"files":5}' ] || die "patch: unexpected $line"
  cmp -s "$t/crates/text/src/eol.rs" "$d/orig/crates/text/src/eol.rs" && die "patch: crates/text/src/eol.rs is unchanged"
  mv "$t" "$d/ours"
  if [ -n "$codex" ]; then
    cp -r "$d/orig" "$t"
    (cd "$t" && "$codex" <"$d/patch.txt" >/dev/null) || die "patch: Codex's apply_patch failed"
    diff -r "$d/ours" "$t" >&2 || die "patch: as-edit and Codex's apply_patch left different trees"
    rm -rf "$t"
  fi
  cp -r "$d/orig" "$t"
  local rss_patch
  rss_patch=$(cd "$t" && /usr/bin/time -f %M "$bin" --patch <"$d/patch.txt" 2>&1 >/dev/null | tail -n 1)
  echo
  local m=patch ours
  ours() { echo "as-edit --patch $(ms "${median[$m/as-edit]}") ms, as apply_patch $(ms "${median[$m/as-edit-apply_patch]}") ms"; }
  if [ -n "$codex" ]; then
    echo "patch (5 files, 10 chunks, copies of source files; $iters runs each, alternating, medians)," \
      "by direct exec: $(ours), Codex apply_patch $(ms "${median[patch/codex]}") ms;" \
      "as-edit / Codex $(ratio "${median[patch/as-edit]}" "${median[patch/codex]}")," \
      "as apply_patch / Codex $(ratio "${median[patch/as-edit-apply_patch]}" "${median[patch/codex]}") $(target '<= 0.3');" \
      "CPU (wait4) as-edit --patch $(ms "${median[patch/cpu/as-edit]}") ms, Codex $(ms "${median[patch/cpu/codex]}") ms" \
      "($(ratio "${median[patch/cpu/as-edit]}" "${median[patch/cpu/codex]}"));"
    m=patch/sh
    echo "  through sh -c: $(ours), Codex apply_patch $(ms "${median[patch/sh/codex]}") ms;" \
      "as-edit / Codex $(ratio "${median[patch/sh/as-edit]}" "${median[patch/sh/codex]}")," \
      "as apply_patch / Codex $(ratio "${median[patch/sh/as-edit-apply_patch]}" "${median[patch/sh/codex]}");" \
      "the same bytes; peak RSS ${rss_patch} KiB"
  else
    echo "patch (5 files, 10 chunks, copies of source files), by direct exec: $(ours);" \
      "through sh -c: $(m=patch/sh; ours); peak RSS ${rss_patch} KiB; the Codex side skipped: $why"
  fi
}
# --- end patch --------------------------------------------------------------

# --- hints ------------------------------------------------------------
# A --hints refusal against the plain one on a 1 MiB source file (generated
# Rust-like code, every line distinct): OLD is three of its lines with one
# changed word, so no normalized-exact kind holds and the whole finder runs,
# `similar` included (the slowest path). Then the same on the `lf` file,
# whose lines are all one line repeated (every line anchors: the finder's
# worst case). Peak RSS of --hints refusals on 64 MiB files: string_not_found
# (the text is cut at 10 MiB), multiple_occurrences (streamed), and long
# lines (`similar`'s line keys at their largest). Targets: <= 3x, <= 16 MiB.
hints_case() {
  local f="$work/hints.txt" r="$work/repeated.txt" o n line
  "$py" - "$f" $((1048576 / scale)) <<'PY'
import sys
path, size = sys.argv[1], int(sys.argv[2])
out, i = [], 0
while sum(map(len, out)) < size:
    if i % 20 == 0:
        out.append("\npub fn step_%d(alpha: &Input, beta: u64) -> Result<u64, Error> {\n" % i)
    out.append("    let value_%d = compute_%d(alpha.field_%d, beta + %d)?; // step %d\n" % (i, i % 97, i % 13, i, i))
    if i % 20 == 19:
        out.append("    Ok(value_%d)\n}\n" % i)
    i += 1
open(path, "w").write("".join(out)[:size].rsplit("\n", 1)[0] + "\n")
PY
  make_file repeated $((1048576 / scale)) lf
  cp "$work/repeated.orig" "$r"
  n=$(b64 'QQ')
  o=$(b64 '    let value_301 = compute_10(alpha.field_2, beta + 301)?; // step 301
    let value_302 = compute_11(alpha.field_3, gamma + 302)?; // step 302
    let value_303 = compute_12(alpha.field_4, beta + 303)?; // step 303')
  local o2
  o2=$(b64 '    let value = compute(alpha, gamma); // some ordinary source text')
  for pair in "$f:$o" "$r:$o2"; do
    line=$("$bin" --hints -- "${pair%%:*}" "${pair#*:}" "$n" false) && die "hints: edited: $line"
    case "$line" in *'"kind":"similar"'*) ;; *) die "hints: no similar hint in $line" ;; esac
  done
  # -i: every command refuses (exit 1) by design.
  hyperfine -N -i "${runs[@]}" --export-csv "$work/hints.csv" \
    -n plain "sh -c \"'$bin' -- '$f' '$o' '$n' false >/dev/null\"" \
    -n hints "sh -c \"'$bin' --hints -- '$f' '$o' '$n' false >/dev/null\"" \
    -n plain-repeated "sh -c \"'$bin' -- '$r' '$o2' '$n' false >/dev/null\"" \
    -n hints-repeated "sh -c \"'$bin' --hints -- '$r' '$o2' '$n' false >/dev/null\"" >&2
  # Medians, and CPU time (user + system, means) and minimums, which a
  # loaded machine distorts less than wall-clock medians.
  local -A cpu fastest
  while IFS=, read -r name mean _ med user sys min _; do
    [ "$name" = command ] && continue
    median[hints/$name]=$med
    cpu[$name]=$(awk -v a="$user" -v b="$sys" 'BEGIN { print a + b }')
    fastest[$name]=$min
  done <"$work/hints.csv"
  # rss of a command that refuses (exit 1) by design
  rss1() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1 || true; }
  local big="$work/large.orig" rss_plain rss_nf rss_multi rss_long
  rss_plain=$(rss1 "$bin" -- "$big" "$o2" "$n" false)
  rss_nf=$(rss1 "$bin" --hints -- "$big" "$o2" "$n" false)
  rss_multi=$(rss1 "$bin" --hints -- "$big" "$(b64 'alpha')" "$n" false)
  "$py" - "$work/long.txt" $((64 * 1048576 / scale)) <<'PY'
import sys
path, size = sys.argv[1], int(sys.argv[2])
line = "".join("v%d=compute(alpha%d,beta%d);" % (i, i, i) for i in range(40)) + "\n"
with open(path, "w") as f:
    f.write((line * (size // len(line) + 1))[:size])
PY
  rss_long=$(rss1 "$bin" --hints -- "$work/long.txt" "$(b64 'v1=compute(alpha1,beta2);v2=compute(alpha2,beta2);')" "$n" false)
  echo
  echo "hints (1 MiB, string_not_found, similar) $(target '<= 3x'), plain vs --hints:"
  local c
  for c in "distinct lines:" "one line repeated:-repeated"; do
    local p=plain${c#*:} h=hints${c#*:}
    echo "  ${c%%:*}: median $(ms "${median[hints/$p]}") vs $(ms "${median[hints/$h]}") ms" \
      "(ratio $(ratio "${median[hints/$h]}" "${median[hints/$p]}")), min $(ms "${fastest[$p]}") vs $(ms "${fastest[$h]}") ms" \
      "($(ratio "${fastest[$h]}" "${fastest[$p]}")), CPU $(ms "${cpu[$p]}") vs $(ms "${cpu[$h]}") ms ($(ratio "${cpu[$h]}" "${cpu[$p]}"))"
  done
  echo "hints peak RSS on 64 MiB: plain ${rss_plain} KiB, --hints not found ${rss_nf} KiB, multiple ${rss_multi} KiB," \
    "long lines ${rss_long} KiB $(target '<= 16384')"
}
# --- end hints ------------------------------------------------------------

# --- long OLD --------------------------------------------------------
# OLD is the large file's own text, 16 MiB of it (scaled), ending where the
# file never does: the worst case for the search (every line a near match)
# and a refusal, so the whole file is searched. Over --stdin, as hosts send
# OLDs past the argv limit.
long_old_case() {
  local f="$work/large.orig" tiny="$work/tiny.txt" mib=$((16 / scale))
  ((mib)) || mib=1
  printf 'tiny\n' > "$tiny"
  "$py" - "$work" "$f" "$tiny" "$mib" <<'PY'
import json, sys
work, big, tiny, mib = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
line = "    let value = compute(alpha, beta); // some ordinary source text\n"
n = mib << 20
old = (line * (n // len(line) + 1))[: n - 8] + "ABSENT!\n"
for name, path, o in (("long", big, old), ("tiny", tiny, old), ("short", big, "needle_absent_from_the_file")):
    json.dump({"path": path, "edits": [{"old": o, "new": "x"}]}, open(f"{work}/{name}.json", "w"))
PY
  local c line
  for c in long tiny short; do
    line=$("$bin" --stdin <"$work/$c.json") && die "long OLD: $c edited: $line"
    [ "$line" = '__RESULT__{"error":"string_not_found"}' ] || die "long OLD: $c: $line"
  done
  hyperfine -N -i "${runs[@]}" --export-csv "$work/long.csv" \
    -n short "sh -c \"'$bin' --stdin <'$work/short.json' >/dev/null\"" \
    -n long "sh -c \"'$bin' --stdin <'$work/long.json' >/dev/null\"" \
    -n tiny "sh -c \"'$bin' --stdin <'$work/tiny.json' >/dev/null\"" >&2
  local -A cpu
  while IFS=, read -r name mean _ med user sys _; do
    [ "$name" = command ] && continue
    median[long/$name]=$med
    cpu[$name]=$(awk -v a="$user" -v b="$sys" 'BEGIN { print a + b }')
  done <"$work/long.csv"
  local search
  search=$(awk -v a="${cpu[long]}" -v b="${cpu[tiny]}" 'BEGIN { print (a > b ? a - b : 0) }')
  echo
  echo "long OLD ($mib MiB over --stdin, $((64 / scale)) MiB file, refused): CPU short $(ms "${cpu[short]}") ms," \
    "long $(ms "${cpu[long]}") ms, the request alone (one-line file) $(ms "${cpu[tiny]}") ms;" \
    "the search's share $(ms "$search") ms ($(ratio "$search" "${cpu[short]}")x the short OLD's);" \
    "medians $(ms "${median[long/short]}") / $(ms "${median[long/long]}") / $(ms "${median[long/tiny]}") ms;" \
    "peak RSS long $(/usr/bin/time -f %M "$bin" --stdin <"$work/long.json" 2>&1 >/dev/null | tail -n 1 || true) KiB"
}
# --- end long OLD -----------------------------------------------------------

# --- toolset --------------------------------------------------------------
# On rust-src (52 MB, 2,236 files): each command a fresh exec with every
# match written out (limit 100000; --hidden --no-ignore so that rg and fd
# walk what the ops walk). Medians of wall time, and user+system CPU means
# (the machine may be shared: CPU time is the fairer figure). AgentScope's
# glob pipeline forks two stats per match: 3 runs only.
toolset_case() {
  local src sysroot
  sysroot=$(rustc --print sysroot 2>/dev/null) || { echo "toolset: skipped, no rustc"; return 0; }
  src="$sysroot/lib/rustlib/src/rust/library"
  [ -d "$src" ] || rustup component add rust-src >&2 || true
  [ -d "$src" ] || { echo "toolset: skipped, no rust-src at $src"; return 0; }
  apt_need ripgrep fd-find
  local g='{"op":"glob","pattern":"*.rs","path":"'"$src"'","limit":100000,"max_bytes":8388608}'
  local lit='{"op":"grep","pattern":"fn get_mut(","path":"'"$src"'","limit":100000,"max_bytes":8388608}'
  local re='{"op":"grep","pattern":"fn \\w+_mut\\(","regex":true,"path":"'"$src"'","limit":100000,"max_bytes":8388608}'
  printf '%s' "$g" >"$work/glob.json"; printf '%s' "$lit" >"$work/lit.json"; printf '%s' "$re" >"$work/re.json"
  local line
  for j in glob lit re; do
    line=$("$bin" --stdin <"$work/$j.json") || die "toolset: $j failed: $line"
    case "$line" in *'"truncated":false'*) ;; *) die "toolset: $j cut or refused: ${line:0:300}" ;; esac
  done
  [ "$(rg --files --hidden --no-ignore -g '*.rs' "$src" | wc -l)" = "$("$bin" --stdin <"$work/glob.json" | grep -o '"size"' | wc -l)" ] ||
    die "toolset: glob and rg --files disagree on the count"
  local pipeline="find '$src' -name '*.rs' | sort | while read -r f; do stat -c %s \"\$f\"; stat -c %Y \"\$f\"; done"
  hyperfine -N "${runs[@]}" --export-csv "$work/tglob.csv" \
    -n as-edit "sh -c \"'$bin' --stdin <'$work/glob.json' >/dev/null\"" \
    -n fd "sh -c \"fdfind -t f --hidden --no-ignore -g '*.rs' . '$src' >/dev/null\"" \
    -n rg-files "sh -c \"rg --files --hidden --no-ignore -g '*.rs' '$src' >/dev/null\"" >&2
  hyperfine -N --runs 3 --export-csv "$work/tpipe.csv" -n agentscope "sh -c $(q "$pipeline >/dev/null")" >&2
  hyperfine -N "${runs[@]}" -i --export-csv "$work/tlit.csv" \
    -n as-edit "sh -c \"'$bin' --stdin <'$work/lit.json' >/dev/null\"" \
    -n rg "sh -c \"rg -n -F --hidden --no-ignore 'fn get_mut(' '$src' >/dev/null\"" \
    -n grep "sh -c \"grep -rnF 'fn get_mut(' '$src' >/dev/null\"" >&2
  hyperfine -N "${runs[@]}" -i --export-csv "$work/tre.csv" \
    -n as-edit "sh -c \"'$bin' --stdin <'$work/re.json' >/dev/null\"" \
    -n rg "sh -c \"rg -n --hidden --no-ignore 'fn \\\\w+_mut\\\\(' '$src' >/dev/null\"" >&2
  # read: lines 1-100 of a 1 GiB file (scaled in quick mode) against the
  # same 100 lines of a small file: the read stops at line 100.
  local huge="$work/huge.txt" small="$work/small100.txt"
  { yes 'the quick brown fox jumps over the lazy dog, line after line of text' || true; } | head -c $((1073741824 / scale)) >"$huge"
  head -n 100 "$huge" >"$small"
  printf '%s' '{"op":"read","path":"'"$huge"'","start":1,"limit":100}' >"$work/rhuge.json"
  printf '%s' '{"op":"read","path":"'"$small"'","start":1,"limit":100}' >"$work/rsmall.json"
  for j in rhuge rsmall; do
    line=$("$bin" --stdin <"$work/$j.json") || die "toolset: $j failed: $line"
    case "$line" in *'"end":100,'*) ;; *) die "toolset: $j did not read lines 1-100: ${line:0:300}" ;; esac
  done
  hyperfine -N "${runs[@]}" --export-csv "$work/tread.csv" \
    -n huge "sh -c \"'$bin' --stdin <'$work/rhuge.json' >/dev/null\"" \
    -n small "sh -c \"'$bin' --stdin <'$work/rsmall.json' >/dev/null\"" >&2
  printf '%s' '{"op":"stat","paths":["'"$src"'","'"$huge"'"]}' >"$work/stat.json"
  printf '%s' '{"op":"list","path":"'"$src"'","depth":64,"limit":100000,"max_bytes":8388608}' >"$work/list.json"
  for j in stat list; do
    line=$("$bin" --stdin <"$work/$j.json") || die "toolset: $j failed: $line"
    case "$line" in *'"error"'*|*'"truncated":true'*) die "toolset: $j cut or refused: ${line:0:300}" ;; esac
  done
  declare -A tmed tcpu
  local f name mean med user sys
  for f in tglob tpipe tlit tre tread; do
    while IFS=, read -r name mean _ med user sys _; do
      [ "$name" = command ] && continue
      tmed[$f/$name]=$med
      tcpu[$f/$name]=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')
    done <"$work/$f.csv"
  done
  local rg_g rl rr rs rli rh
  rg_g=$(rss "$bin" --stdin <"$work/glob.json"); rl=$(rss "$bin" --stdin <"$work/lit.json"); rr=$(rss "$bin" --stdin <"$work/re.json")
  rs=$(rss "$bin" --stdin <"$work/stat.json"); rli=$(rss "$bin" --stdin <"$work/list.json"); rh=$(rss "$bin" --stdin <"$work/rhuge.json")
  echo
  echo "toolset on rust-src ($(find "$src" -type f | wc -l) files), median wall ms / mean CPU (user+sys) ms:"
  echo
  echo "| op | as-edit | reference | reference | as-edit / first reference (wall, CPU) | target |"
  echo "| --- | ---: | ---: | ---: | ---: | --- |"
  echo "| glob '*.rs' | $(ms "${tmed[tglob/as-edit]}") / $(ms "${tcpu[tglob/as-edit]}") | fd $(ms "${tmed[tglob/fd]}") / $(ms "${tcpu[tglob/fd]}") | rg --files $(ms "${tmed[tglob/rg-files]}") / $(ms "${tcpu[tglob/rg-files]}") | $(ratio "${tmed[tglob/as-edit]}" "${tmed[tglob/fd]}"), $(ratio "${tcpu[tglob/as-edit]}" "${tcpu[tglob/fd]}") | <= 1.5 |"
  echo "| glob vs AgentScope pipeline | | pipeline $(ms "${tmed[tpipe/agentscope]}") / $(ms "${tcpu[tpipe/agentscope]}") | | pipeline / as-edit $(ratio "${tmed[tpipe/agentscope]}" "${tmed[tglob/as-edit]}") | >= 100 |"
  echo "| grep -F 'fn get_mut(' | $(ms "${tmed[tlit/as-edit]}") / $(ms "${tcpu[tlit/as-edit]}") | rg -F $(ms "${tmed[tlit/rg]}") / $(ms "${tcpu[tlit/rg]}") | grep -rF $(ms "${tmed[tlit/grep]}") / $(ms "${tcpu[tlit/grep]}") | $(ratio "${tmed[tlit/as-edit]}" "${tmed[tlit/rg]}"), $(ratio "${tcpu[tlit/as-edit]}" "${tcpu[tlit/rg]}") | <= 1.5 |"
  echo "| grep 'fn \w+_mut\(' | $(ms "${tmed[tre/as-edit]}") / $(ms "${tcpu[tre/as-edit]}") | rg $(ms "${tmed[tre/rg]}") / $(ms "${tcpu[tre/rg]}") | | $(ratio "${tmed[tre/as-edit]}" "${tmed[tre/rg]}"), $(ratio "${tcpu[tre/as-edit]}" "${tcpu[tre/rg]}") | <= 3 |"
  echo "| read lines 1-100 of $((1024 / scale)) MiB | $(ms "${tmed[tread/huge]}") / $(ms "${tcpu[tread/huge]}") | the same 100 lines alone $(ms "${tmed[tread/small]}") / $(ms "${tcpu[tread/small]}") | | $(ratio "${tmed[tread/huge]}" "${tmed[tread/small]}"), $(ratio "${tcpu[tread/huge]}" "${tcpu[tread/small]}") | <= 2 |"
  echo
  echo "peak RSS: stat ${rs} KiB, list (whole tree) ${rli} KiB, read 1-100 ${rh} KiB, glob ${rg_g} KiB, literal grep ${rl} KiB, regex grep ${rr} KiB (target <= 4096)"
  rm -f "$huge"
  # Pages of max_bytes 8 MiB, each a full page: a text read of a 20 MB
  # file, a raw read of it, a content grep matching every line of it, and
  # a list of a tree of 72,000 files; the page held once.
  local t20="$work/text20.txt" tree="$work/tree72k" d
  { yes 'let needle = value; // the quick brown fox jumps over the lazy dog' || true; } | head -c 20000000 >"$t20"
  for d in $(seq 72); do
    mkdir -p "$tree/d$d" && (cd "$tree/d$d" && seq -f 'a_file_with_a_longer_name_%05g.txt' 1000 | xargs touch)
  done
  printf '%s' '{"op":"read","path":"'"$t20"'","max_bytes":8388608}' >"$work/p8text.json"
  printf '%s' '{"op":"read","path":"'"$t20"'","raw":true,"max_bytes":8388608}' >"$work/p8raw.json"
  printf '%s' '{"op":"grep","pattern":"needle","path":"'"$t20"'","limit":100000,"max_bytes":8388608}' >"$work/p8grep.json"
  printf '%s' '{"op":"list","path":"'"$tree"'","depth":2,"limit":100000,"max_bytes":8388608}' >"$work/p8list.json"
  local j p8=()
  for j in p8text p8raw p8grep p8list; do
    line=$("$bin" --stdin <"$work/$j.json") || die "toolset: $j failed: ${line:0:300}"
    case "$line" in *'"truncated":true'*) ;; *) die "toolset: $j is not a full page: ${line:0:300}" ;; esac
    p8+=("$(rss "$bin" --stdin <"$work/$j.json")")
  done
  echo "peak RSS at max_bytes 8 MiB: text read of 20 MB ${p8[0]} KiB, raw read ${p8[1]} KiB, grep content ${p8[2]} KiB, list of 72,000 files ${p8[3]} KiB $(target '<= max_bytes + 2 MiB = 10240')"
  rm -rf "$t20" "$tree"
}
# --- end toolset --------------------------------------------------------------

if ((toolset_only)); then
  toolset_case
  exit 0
fi
if ((files_only)); then
  files_case
  exit 0
fi
if ((patch_only)); then
  patch_case
  exit 0
fi
make_file large $((64 * 1048576 / scale)) lf
if ((large_only)); then
  apt_need xfsprogs
  ((quick)) && iters=2
  f="$work/large.txt" o=$(b64 'needle_near_the_end = 1') n=$(b64 'needle_near_the_end = 2')
  cmds=("as-edit='$bin' -- '$f' '$o' '$n' false")
  for a in "${also[@]}"; do cmds+=("$(basename "$a")='$(realpath "$a")' -- '$f' '$o' '$n' false"); done
  # The copy as as-edit makes it: its data
  # written back and waited for before the rename (settle() in
  # src/fs/temp.rs), which cp+mv leaves to the kernel's flusher. xfs_io's
  # sync_range keeps only the last of -a, -b, -w (`-a -b -w` is a bare
  # SYNC_FILE_RANGE_WRITE, which waits for nothing: strace), so the
  # three steps of settle()'s one call are three commands here.
  cmds+=("copy=cp '$f' '$f.tmp' && mv '$f.tmp' '$f'"
    "copy+writeback=cp '$f' '$f.tmp' && xfs_io -c 'sync_range -b 0 0' -c 'sync_range -w 0 0' -c 'sync_range -a 0 0' '$f.tmp' && mv '$f.tmp' '$f'")
  out=$("$py" scripts/bench/alternate.py "$iters" "$work/large.orig" "$f" "${cmds[@]}")
  read -r _ kw kc < <(grep '^copy ' <<<"$out")
  read -r _ bw bc < <(grep '^copy+writeback ' <<<"$out")
  echo "large ($((64 * 1024 / scale)) KiB, one edit near the end), $iters iterations alternating, medians:"
  echo
  echo "| command | ms | / copy | / copy+writeback | CPU ms | CPU / copy | CPU / copy+writeback |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  while read -r name w c; do
    echo "| $name | $(ms "$w") | $(ratio "$w" "$kw") | $(ratio "$w" "$bw") | $(ms "$c") | $(ratio "$c" "$kc") | $(ratio "$c" "$bc") |"
  done <<<"$out"
  exit 0
fi
if ((long_old_only)); then
  long_old_case
  exit 0
fi
if ((hints_only)); then
  hints_case
  exit 0
fi
if ((diff_only)); then
  diff_case
  exit 0
fi
make_file small $((4096)) lf
make_file many $((16 * 1048576 / scale)) many
make_file crlf $((16 * 1048576 / scale)) crlf

bench small "needle_near_the_end = 1" "needle_near_the_end = 2" false noop
bench large "needle_near_the_end = 1" "needle_near_the_end = 2" false
bench many "tok" "TOKEN" true
bench crlf "needle_near_the_end = 1" "needle_near_the_end = 2" false
# A refused edit of the large file: OLD occurs nowhere (agents' most common refusal).
cp "$work/large.orig" "$work/refuse.orig"
bench refuse "needle_absent_from_the_file" "x" false

cp "$work/large.orig" "$work/large.txt"
rss_as_large=$(rss "$bin" -- "$work/large.txt" "$(b64 'needle_near_the_end = 1')" "$(b64 'needle_near_the_end = 2')" false)
cp "$work/large.orig" "$work/large.txt"
rss_py_large=$(rss "$py" scripts/bench/status_quo.py "$work/large.txt" "$(b64 'needle_near_the_end = 1')" "$(b64 'needle_near_the_end = 2')" false)

echo
echo "machine: $(nproc) cores, $(uname -m), $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1), kernel $(uname -r), $(df -T "$work" | awk 'NR==2 {print $2}')"
echo "files: small 4 KiB, large $((64 * 1024 / scale)) KiB, many/crlf $((16 * 1024 / scale)) KiB$( ((quick)) && echo ' (quick mode)')"
echo
printf '| case | as-edit ms | status quo ms | copy ms | no-op ms | status quo / as-edit | as-edit / copy | as-edit / no-op |\n'
printf '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n'
for c in small large many crlf refuse; do
  a=${median[$c/as-edit]} s=${median[$c/status-quo]} k=${median[$c/copy]} z=${median[$c/no-op]:-}
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$c" "$(ms "$a")" "$(ms "$s")" "$(ms "$k")" \
    "${z:+$(ms "$z")}" "$(ratio "$s" "$a")" "$(ratio "$a" "$k")" "${z:+$(ratio "$a" "$z")}"
done
# The same cases timed alternating (scripts/bench/alternate.py): hyperfine
# times each command's series in turn, so a slow minute on a shared machine
# lands on one command; here every iteration runs as-edit and the copy once
# each, in alternating order, each after a fresh cp + sync.
alt_iters=30
((quick)) && alt_iters=2
alt_case() { # CASE OLD NEW ALL
  local f="$work/$1.txt" out a k ac kc
  out=$("$py" scripts/bench/alternate.py "$alt_iters" "$work/$1.orig" "$f" \
    "as-edit='$bin' -- '$f' '$(b64 "$2")' '$(b64 "$3")' $4" \
    "copy=cp '$f' '$f.tmp' && mv '$f.tmp' '$f'")
  read -r _ a ac < <(grep '^as-edit ' <<<"$out")
  read -r _ k kc < <(grep '^copy ' <<<"$out")
  [ -n "$ac" ] && [ -n "$kc" ] || die "alternate.py printed: $out"
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$(ms "$a")" "$(ms "$k")" "$(ratio "$a" "$k")" \
    "$(ms "$ac")" "$(ms "$kc")" "$(ratio "$ac" "$kc")"
}
echo
echo "timed alternating ($alt_iters iterations each, medians):"
echo
echo "| case | as-edit ms | copy ms | as-edit / copy | as-edit CPU ms | copy CPU ms | CPU as-edit / copy |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
alt_case large "needle_near_the_end = 1" "needle_near_the_end = 2" false
alt_case many "tok" "TOKEN" true
alt_case crlf "needle_near_the_end = 1" "needle_near_the_end = 2" false
alt_case refuse "needle_absent_from_the_file" "x" false

echo
echo "peak RSS on large: as-edit ${rss_as_large} KiB, status quo ${rss_py_large} KiB"
diff_case
hints_case
files_case
patch_case
long_old_case
toolset_case

if ((huge)); then
  make_file huge $((1024 * 1048576)) lf
  cp "$work/huge.orig" "$work/huge.txt"
  start=$(date +%s.%N)
  rss_huge=$(rss "$bin" -- "$work/huge.txt" "$(b64 'needle_near_the_end = 1')" "$(b64 'needle_near_the_end = 2')" false)
  end=$(date +%s.%N)
  cp "$work/huge.orig" "$work/huge.copy"
  cstart=$(date +%s.%N)
  cp "$work/huge.txt" "$work/huge.tmp" && mv "$work/huge.tmp" "$work/huge.txt"
  cend=$(date +%s.%N)
  echo "huge (1 GiB, one edit): as-edit $(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b-a}') s (incl. /usr/bin/time), copy $(awk -v a="$cstart" -v b="$cend" 'BEGIN{printf "%.2f", b-a}') s, as-edit peak RSS ${rss_huge} KiB"
fi
