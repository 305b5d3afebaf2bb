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
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
# --docker [--quick] [--bin PATH]: the docker exec timing table instead (scripts/bench/docker.sh).
[ "${1:-}" = --docker ] && { shift; exec scripts/bench/docker.sh "$@"; }

quick=0 huge=0 diff_only=0 hints_only=0 files_only=0 bin="" install=0
while (($#)); do
  case "$1" in
    --install) install=1 ;;
    --quick) quick=1 ;;
    --huge) huge=1 ;;
    --diff-only) diff_only=1 ;;
    --hints-only) hints_only=1 ;;
    --files-only) files_only=1 ;;
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
    "ratio $(ratio "${median[diff/report-diff]}" "${median[diff/report]}") (target <= 2);" \
    "peak RSS --report ${rss_report} KiB, --report --diff ${rss_diff} KiB (target <= 4096)"
}

# --- files (issue 19) -----------------------------------------------------
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
    "transaction / one exec $(ratio "${median[files/transaction]}" "${median[files/one-exec]}") (target <= 2)," \
    "ten execs / transaction $(ratio "${median[files/ten-execs]}" "${median[files/transaction]}");" \
    "peak RSS ${rss_txn} KiB (target <= 4096)"
}

# --- hints (issue 11) ---------------------------------------------------
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
  echo "hints (1 MiB, string_not_found, similar; target <= 3x), plain vs --hints:"
  local c
  for c in "distinct lines:" "one line repeated:-repeated"; do
    local p=plain${c#*:} h=hints${c#*:}
    echo "  ${c%%:*}: median $(ms "${median[hints/$p]}") vs $(ms "${median[hints/$h]}") ms" \
      "(ratio $(ratio "${median[hints/$h]}" "${median[hints/$p]}")), min $(ms "${fastest[$p]}") vs $(ms "${fastest[$h]}") ms" \
      "($(ratio "${fastest[$h]}" "${fastest[$p]}")), CPU $(ms "${cpu[$p]}") vs $(ms "${cpu[$h]}") ms ($(ratio "${cpu[$h]}" "${cpu[$p]}"))"
  done
  echo "hints peak RSS on 64 MiB: plain ${rss_plain} KiB, --hints not found ${rss_nf} KiB, multiple ${rss_multi} KiB," \
    "long lines ${rss_long} KiB (target <= 16384)"
}
# --- end hints ------------------------------------------------------------

if ((files_only)); then
  files_case
  exit 0
fi
make_file large $((64 * 1048576 / scale)) lf
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
echo "files: small 4 KiB, large $((64 / scale * 1024)) KiB, many/crlf $((16 / scale * 1024)) KiB$( ((quick)) && echo ' (quick mode)')"
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
  local f="$work/$1.txt" out a k
  out=$("$py" scripts/bench/alternate.py "$alt_iters" "$work/$1.orig" "$f" \
    "as-edit='$bin' -- '$f' '$(b64 "$2")' '$(b64 "$3")' $4" \
    "copy=cp '$f' '$f.tmp' && mv '$f.tmp' '$f'")
  a=$(awk '$1 == "as-edit" { print $2 }' <<<"$out")
  k=$(awk '$1 == "copy" { print $2 }' <<<"$out")
  [ -n "$a" ] && [ -n "$k" ] || die "alternate.py printed: $out"
  printf '| %s | %s | %s | %s |\n' "$1" "$(ms "$a")" "$(ms "$k")" "$(ratio "$a" "$k")"
}
echo
echo "timed alternating ($alt_iters iterations each, medians):"
echo
echo "| case | as-edit ms | copy ms | as-edit / copy |"
echo "| --- | ---: | ---: | ---: |"
alt_case large "needle_near_the_end = 1" "needle_near_the_end = 2" false
alt_case many "tok" "TOKEN" true
alt_case crlf "needle_near_the_end = 1" "needle_near_the_end = 2" false
alt_case refuse "needle_absent_from_the_file" "x" false

echo
echo "peak RSS on large: as-edit ${rss_as_large} KiB, status quo ${rss_py_large} KiB"
diff_case
hints_case
files_case

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
