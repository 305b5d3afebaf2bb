#!/usr/bin/env bash
# The cost of an edit through `docker exec`, as a Docker host pays it:
# hyperfine medians of a 4 KiB edit through the helper (sh -c, as hosts send
# it, and argv), against `docker exec C true` (the engine's own round trip,
# so as-edit's cost is the difference) and, when an image with python3 can
# be built offline, the status-quo python3 script through its heredoc.
# Called by scripts/bench.sh --docker. Usage: scripts/bench/docker.sh [--quick] [--bin PATH]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/common.sh
. scripts/docker-engine.sh

quick=0 bin=""
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --bin) bin=$2; shift ;;
    *) die "unknown argument $1" ;;
  esac
  shift
done
apt_need hyperfine busybox-static
version=$(pkg_version)
if [ -z "$bin" ]; then
  scripts/build-static.sh x86_64-unknown-linux-musl >/dev/null
  bin="$PWD/dist/as-edit-$version-x86_64-unknown-linux-musl"
fi
busybox=$(command -v busybox) || die "busybox is needed (Debian: busybox-static)"

run_id="$$-$RANDOM"
label="as-edit-bench=$run_id"
tag="b$run_id"
work=$(mktemp -d)
cleanup() {
  local ids
  ids=$(docker ps -aq --filter "label=$label" 2>/dev/null || true)
  [ -z "$ids" ] || docker rm -f $ids >/dev/null 2>&1 || true
  docker image rm -f "as-edit-bench/busybox:$tag" "as-edit-bench/python:$tag" >/dev/null 2>&1 || true
  docker_down
  rm -rf "$work"
}
trap cleanup EXIT
docker_up
scripts/image.sh --bin "$bin" >&2

# A busybox root with the helper from the image layer (the README's COPY line).
mkdir -p "$work/bb/bin" "$work/bb/work" "$work/ctx"
cp "$busybox" "$work/bb/bin/busybox"
for a in $("$busybox" --list); do [ "$a" = busybox ] || ln -s busybox "$work/bb/bin/$a"; done
tar -C "$work/bb" -c . | docker import - "as-edit-bench/busybox:$tag" >/dev/null
printf 'FROM as-edit-bench/busybox:%s\nCOPY --from=as-edit:%s /opt/as-edit/as-edit /opt/as-edit/as-edit\n' "$tag" "$version" >"$work/ctx/Dockerfile"
DOCKER_BUILDKIT=0 docker build -q -t "as-edit-bench/busybox:$tag" "$work/ctx" >/dev/null 2>&1 || die "docker build failed"

# The status quo needs python3 in the image. Offline, the only python3 is
# the host's: copy it, the shared libraries ldd names (for it and its
# extension modules) and its standard library into the busybox root.
python_note=""
py=$(readlink -f /usr/bin/python3 2>/dev/null || true)
if [ -x "$py" ] && command -v ldd >/dev/null; then
  pyver=$(basename "$py")
  proot="$work/py"
  cp -a "$work/bb" "$proot"
  mkdir -p "$proot/usr/bin" "$proot/usr/lib"
  cp "$py" "$proot/usr/bin/$pyver" && ln -s "$pyver" "$proot/usr/bin/python3"
  cp -a "/usr/lib/$pyver" "$proot/usr/lib/" && rm -rf "$proot/usr/lib/$pyver/test"
  for lib in $( { ldd "$py"; find "/usr/lib/$pyver/lib-dynload" -name '*.so' -exec ldd {} \; ; } 2>/dev/null \
      | grep -o '/[^ ]*' | sort -u); do
    mkdir -p "$proot$(dirname "$lib")" && cp -L "$lib" "$proot$lib"
  done
  if tar -C "$proot" -c . | docker import - "as-edit-bench/python:$tag" >/dev/null \
    && pc=$(docker run -d --pull=never --network none --label "$label" "as-edit-bench/python:$tag" sleep 3600) \
    && docker exec "$pc" python3 -c 'import base64, json, os, sys, uuid' 2>"$work/pyerr"; then
    python_note="python3: the host's $pyver with its libraries, copied into the busybox root ($(du -sm "$proot" | cut -f1) MiB)"
  else
    python_note="no python3 image: the copied host python3 does not run there: $(tail -n 1 "$work/pyerr" 2>/dev/null)"
    pc=""
  fi
else
  python_note="no python3 image: no host python3 to copy, and no registry to pull one from"
  pc=""
fi

c=$(docker run -d --pull=never --network none --label "$label" "as-edit-bench/busybox:$tag" sleep 3600)
# The small case of scripts/bench.sh: 4 KiB of source text, one edit.
line="    let value = compute(alpha, beta); // some ordinary source text"
{ for _ in $(seq 60); do echo "$line"; done; echo "needle_near_the_end = 1"; } >"$work/f.orig"
for ct in "$c" ${pc:+"$pc"}; do
  docker cp "$work/f.orig" "$ct:/work/f.orig"
done
b64() { printf '%s' "$1" | base64 -w0; }
o=$(b64 "needle_near_the_end = 1") n=$(b64 "needle_near_the_end = 2")
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
edit_sh="'/opt/as-edit/as-edit' '--' '/work/f.txt' '$o' '$n' 'false'"
status_quo="python3 - '/work/f.txt' '$o' '$n' false <<'AS_EDIT_BENCH_EOF'
$(cat scripts/bench/status_quo.py)
AS_EDIT_BENCH_EOF"

# Check that every measured edit really edits, once, before timing it.
docker exec "$c" cp /work/f.orig /work/f.txt
got=$(docker exec "$c" sh -c "$edit_sh")
[ "$got" = '__RESULT__{"count":1}' ] || die "the edit through docker exec printed: $got"
if [ -n "$pc" ]; then
  docker exec "$pc" cp /work/f.orig /work/f.txt
  got=$(docker exec "$pc" sh -c "$status_quo")
  grep -q '"count": *1' <<<"$got" || die "the status quo through docker exec printed: $got"
fi

runs=(--warmup 3 --min-runs 20)
((quick)) && runs=(--warmup 1 --runs 3)
cmds=(
  -n "as-edit (sh -c)" "docker exec $c sh -c $(q "$edit_sh")"
  -n "as-edit (argv)" "docker exec $c /opt/as-edit/as-edit -- /work/f.txt $o $n false"
  -n "true (argv)" "docker exec $c true"
  -n "sh -c true" "docker exec $c sh -c true"
)
[ -n "$pc" ] && cmds+=(-n "status quo (python3)" "docker exec $pc sh -c $(q "$status_quo")")
prep="docker exec $c cp /work/f.orig /work/f.txt${pc:+ && docker exec $pc cp /work/f.orig /work/f.txt}"
hyperfine -N "${runs[@]}" --prepare "sh -c $(q "$prep")" --export-csv "$work/t.csv" "${cmds[@]}" >&2

declare -A med
while IFS=, read -r name _ _ m _; do
  [ "$name" = command ] || med[$name]=$m
done <"$work/t.csv"
ms() { awk -v a="$1" 'BEGIN { printf "%.1f", a * 1000 }'; }
diff_ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f", (a - b) * 1000 }'; }
base=${med[true (argv)]}
echo
echo "docker exec, $(docker version -f '{{.Server.Version}}') engine, $(nproc) cores, kernel $(uname -r); 4 KiB file, one edit$( ((quick)) && echo ' (quick mode)')"
echo
echo "| command | median ms | minus \`docker exec C true\` |"
echo "| --- | ---: | ---: |"
for k in "true (argv)" "sh -c true" "as-edit (argv)" "as-edit (sh -c)" "status quo (python3)"; do
  [ -n "${med[$k]:-}" ] || continue
  echo "| $k | $(ms "${med[$k]}") | $(diff_ms "${med[$k]}" "$base") |"
done
echo
echo "$python_note"
