#!/usr/bin/env bash
# Conformance against a real Docker engine: builds the image layer
# (scripts/image.sh) and test images offline, checks the README's install
# lines (COPY --from, docker cp), runs tests/docker.rs through host::docker,
# and the example with --docker. As root it installs docker.io and starts
# dockerd if none answers (stopping it afterwards); every container carries
# a label and is removed on exit.
# AS_EDIT_SKIP_DOCKER=1 skips, saying so (for machines without root).
# Usage: scripts/docker-test.sh [--bin STATIC_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
. scripts/docker-engine.sh

if [ -n "${AS_EDIT_SKIP_DOCKER:-}" ]; then
  echo "skipped: Docker conformance (AS_EDIT_SKIP_DOCKER is set; it needs a Docker engine, started as root)"
  exit 0
fi
bin=${AS_EDIT_STATIC_BIN:-}
[ "${1:-}" = --bin ] && bin=$2
version=$(pkg_version)
if [ -z "$bin" ]; then
  scripts/build-static.sh x86_64-unknown-linux-musl >/dev/null
  bin="$PWD/dist/as-edit-$version-x86_64-unknown-linux-musl"
fi
bin=$(realpath "$bin")
[ "$(id -u)" = 0 ] && apt_need busybox-static
busybox=$(command -v busybox) || die "busybox is needed (Debian: busybox-static)"

run_id="$$-$RANDOM"
label="as-edit-test=$run_id"
tag="t$run_id"
work=$(mktemp -d)
cleanup() {
  local ids
  ids=$(docker ps -aq --filter "label=$label" 2>/dev/null || true)
  [ -z "$ids" ] || docker rm -f $ids >/dev/null 2>&1 || true
  docker image rm -f "as-edit-test/busybox:$tag" "as-edit-test/busybox-helper:$tag" \
    "as-edit-test/scratch:$tag" "as-edit-test/scratch-helper:$tag" "as-edit-test/user:$tag" >/dev/null 2>&1 || true
  docker_down
  rm -rf "$work"
}
trap cleanup EXIT
docker_up

step() { printf -- '-- %s\n' "$*"; }
run() { docker run -d --pull=never --network none --label "$label" "$@"; }
build() { # TAG DIR : the classic builder (no registry, no buildx)
  local out
  out=$(DOCKER_BUILDKIT=0 docker build -q -t "$1" "$2" 2>&1) || die "docker build $1: $out"
}

step "the image layer: as-edit:$version and :latest, FROM scratch"
arm_bin="dist/as-edit-$version-aarch64-unknown-linux-musl"
arm=()
[ -f "$arm_bin" ] && arm=(--aarch64)
scripts/image.sh --bin "$bin" "${arm[@]}"
# Every file of every layer (docker save of the classic builder: one layer.tar).
got=$(docker save "as-edit:$version" | tar -xO --wildcards '*/layer.tar' | tar -t | tr '\n' ' ')
[ "$got" = "opt/ opt/as-edit/ opt/as-edit/as-edit " ] || die "as-edit:$version holds more than the helper: $got"
echo "ok: as-edit:$version holds only: $got"

# A rebuild with another binary moves the tags; the image they named before
# must not stay behind as a dangling <none>.
first=$(docker image inspect -f '{{.Id}}' "as-edit:$version")
cp "$bin" "$work/other-bin"
printf x >>"$work/other-bin"
scripts/image.sh --bin "$work/other-bin" >/dev/null
if docker image inspect "$first" >/dev/null 2>&1; then die "rebuilding as-edit:$version left the previous image $first behind"; fi
second=$(docker image inspect -f '{{.Id}}' "as-edit:$version")
scripts/image.sh --bin "$bin" >/dev/null
if docker image inspect "$second" >/dev/null 2>&1; then die "rebuilding as-edit:$version left the previous image $second behind"; fi
echo "ok: rebuilding the image layer leaves no dangling image"

if ((${#arm[@]})); then
  arch=$(docker image inspect -f '{{.Os}}/{{.Architecture}}' "as-edit:$version-aarch64")
  [ "$arch" = linux/arm64 ] || die "as-edit:$version-aarch64 is $arch"
  files=$(docker create --label "$label" --platform linux/arm64 "as-edit:$version-aarch64" /opt/as-edit/as-edit)
  docker cp "$files:/opt/as-edit/as-edit" "$work/arm"
  docker rm "$files" >/dev/null
  cmp "$work/arm" "$arm_bin" || die "as-edit:$version-aarch64 does not hold $arm_bin"
  # No binfmt handler is registered here, so the engine cannot run arm64
  # images; the copied-out binary runs under qemu-aarch64-static instead.
  if command -v qemu-aarch64-static >/dev/null; then
    got=$(qemu-aarch64-static "$work/arm" --version)
    [ "$got" = "as-edit $version (protocol 4; aarch64-unknown-linux-musl)" ] || die "aarch64 image binary: $got"
  fi
  echo "ok: as-edit:$version-aarch64 is linux/arm64 and holds $arm_bin"
else
  echo "not checked: the aarch64 image ($arm_bin is not built; scripts/test.sh builds it)"
fi

step "test images: busybox root (docker import), scratch with a static sleep"
mkdir -p "$work/bb/bin" "$work/bb/etc" "$work/bb/tmp"
chmod 1777 "$work/bb/tmp"
cp "$busybox" "$work/bb/bin/busybox"
for a in $("$busybox" --list); do [ "$a" = busybox ] || ln -s busybox "$work/bb/bin/$a"; done
printf 'read only\n' >"$work/bb/etc/as-edit-test.txt"
tar -C "$work/bb" -c . | docker import - "as-edit-test/busybox:$tag" >/dev/null
mkdir -p "$work/scratch/pause"
cp "$busybox" "$work/scratch/pause/sleep"  # busybox runs the applet its name says: sleep, no sh
printf 'FROM scratch\nCOPY pause/sleep /pause/sleep\nWORKDIR /work\n' >"$work/scratch/Dockerfile"
build "as-edit-test/scratch:$tag" "$work/scratch"
# The README's line, verbatim, in user images (busybox-based and scratch).
for base in busybox scratch; do
  mkdir -p "$work/$base-helper"
  printf 'FROM as-edit-test/%s:%s\nCOPY --from=as-edit:%s /opt/as-edit/as-edit /opt/as-edit/as-edit\n' \
    "$base" "$tag" "$version" >"$work/$base-helper/Dockerfile"
  build "as-edit-test/$base-helper:$tag" "$work/$base-helper"
done
c=$(run "as-edit-test/busybox-helper:$tag" sleep 3600)
want="as-edit $version (protocol 4; x86_64-unknown-linux-musl)"
got=$(docker exec "$c" /opt/as-edit/as-edit --version)
[ "$got" = "$want" ] || die "COPY --from: --version said '$got'"
got=$(docker exec "$c" stat -c '%a %u:%g' /opt/as-edit/as-edit)
[ "$got" = "755 0:0" ] || die "COPY --from: mode/owner '$got'"
echo "ok: COPY --from=as-edit:$version gives a working 0755 helper: $got"

step "docker cp into a running scratch container (README lines)"
c=$(run "as-edit-test/scratch:$tag" /pause/sleep 3600)
if docker cp "$bin" "$c:/opt/as-edit/as-edit" 2>"$work/err"; then
  die "docker cp of a single file into a missing directory unexpectedly worked"
fi
echo "as documented, a file into a missing directory fails: $(tail -n 1 "$work/err")"
install -D -m 755 "$bin" "$work/stage/opt/as-edit/as-edit"
docker cp "$work/stage/opt" "$c:/"
got=$(docker exec "$c" /opt/as-edit/as-edit --version)
[ "$got" = "$want" ] || die "docker cp of the directory: --version said '$got'"
echo "ok: docker cp stage/opt CONTAINER:/ installs into a scratch container: $got"
docker cp "$bin" "$c:/opt/as-edit/as-edit.new"  # the directory now exists: a single file works
got=$(docker exec "$c" /opt/as-edit/as-edit.new --version)
[ "$got" = "$want" ] || die "docker cp of the file into an existing directory: '$got'"
echo "ok: docker cp FILE CONTAINER:/opt/as-edit/as-edit works once /opt/as-edit exists"

step "the host library against the engine (tests/docker.rs)"
AS_EDIT_DOCKER_LABEL="$label" \
AS_EDIT_DOCKER_IMAGE_SCRATCH="as-edit-test/scratch:$tag" \
AS_EDIT_DOCKER_IMAGE_SCRATCH_HELPER="as-edit-test/scratch-helper:$tag" \
AS_EDIT_DOCKER_IMAGE_BUSYBOX="as-edit-test/busybox:$tag" \
AS_EDIT_DOCKER_IMAGE_BUSYBOX_HELPER="as-edit-test/busybox-helper:$tag" \
AS_EDIT_STATIC_BIN="$bin" \
  cargo test --quiet --all-features --test docker -- --ignored --test-threads 2
# A fresh Debian machine has only docker.io's CLI (20.10 there), whose
# messages differ from newer CLIs' (a missing file in docker cp, say): when
# /usr/bin/docker is not the CLI found first on PATH, run the tests again
# with it.
if [ -x /usr/bin/docker ] && [ "$(command -v docker)" != /usr/bin/docker ]; then
  step "tests/docker.rs again with /usr/bin/docker ($(/usr/bin/docker version -f '{{.Client.Version}}' 2>/dev/null) CLI)"
  PATH="/usr/bin:$PATH" \
  AS_EDIT_DOCKER_LABEL="$label" \
  AS_EDIT_DOCKER_IMAGE_SCRATCH="as-edit-test/scratch:$tag" \
  AS_EDIT_DOCKER_IMAGE_SCRATCH_HELPER="as-edit-test/scratch-helper:$tag" \
  AS_EDIT_DOCKER_IMAGE_BUSYBOX="as-edit-test/busybox:$tag" \
  AS_EDIT_DOCKER_IMAGE_BUSYBOX_HELPER="as-edit-test/busybox-helper:$tag" \
  AS_EDIT_STATIC_BIN="$bin" \
    cargo test --quiet --all-features --test docker -- --ignored --test-threads 2
fi

step "the example with --docker"
cargo build --quiet --all-features --example host
ex=target/debug/examples/host
expect() { # WANT_OUTPUT WANT_EXIT CMD...
  local want=$1 code=$2 out rc; shift 2
  out=$("$@") && rc=0 || rc=$?
  [ "$out" = "$want" ] && [ "$rc" = "$code" ] || die "$*: got '$out' exit $rc, want '$want' exit $code"
  echo "ok: $out (exit $rc)"
}
c=$(run "as-edit-test/busybox-helper:$tag" sleep 3600)
docker exec "$c" sh -c 'mkdir /work && printf "a b b\n" > /work/f.txt'
expect "edited 1 (native)" 0 "$ex" --docker "$c" /work/f.txt a A
expect "edited 2 (native)" 0 "$ex" --docker "$c" /work/f.txt b B --all
expect "string not found" 1 "$ex" --docker "$c" /work/f.txt zzz y
expect "edited 1 (fallback: transfer)" 0 env AS_EDIT_HELPER=/nonexistent "$ex" --docker "$c" /work/f.txt A a
[ "$(docker exec "$c" cat /work/f.txt)" = "a B B" ] || die "example edits: $(docker exec "$c" cat /work/f.txt)"
c=$(run "as-edit-test/busybox:$tag" sleep 3600)
docker exec "$c" sh -c 'mkdir /work && printf "x\n" > /work/f.txt && chown -R 1000:1000 /work'
expect "edited 1 (native)" 0 env AS_EDIT_STATIC_BIN="$bin" "$ex" --docker "$c" --install --user 1000:1000 /work/f.txt x y
[ "$(docker exec "$c" stat -c '%u %a' /work/f.txt /opt/as-edit/as-edit | tr '\n' ' ')" = "1000 644 0 755 " ] \
  || die "--install over exec: $(docker exec "$c" stat -c '%n %u %a' /work/f.txt /opt/as-edit/as-edit)"
# A shell without mkdir and chmod: --install goes by docker cp instead.
c=$(run "as-edit-test/busybox:$tag" sleep 3600)
docker exec "$c" sh -c 'printf "x\n" > /tmp/f.txt && rm /bin/mkdir /bin/chmod'
expect "edited 1 (native)" 0 env AS_EDIT_STATIC_BIN="$bin" "$ex" --docker "$c" --install /tmp/f.txt x y
[ "$(docker exec "$c" stat -c '%a %u' /opt/as-edit/as-edit)" = "755 0" ] || die "--install without mkdir: $(docker exec "$c" ls -la /opt/as-edit)"
c=$(run "as-edit-test/scratch:$tag" /pause/sleep 3600)
docker cp "$work/bb/etc/as-edit-test.txt" "$c:/work/f.txt"
expect "edited 1 (native)" 0 env AS_EDIT_STATIC_BIN="$bin" "$ex" --docker "$c" --install /work/f.txt only alone
expect "backend error: no such container: as-edit-none" 1 "$ex" --docker as-edit-none /work/f.txt a b

step "examples/anthropic_toolset.py: its five tools in a scratch container, side by side with the reference"
py=$(scripts/toolset-venv.sh)
command -v rg >/dev/null || apt_need ripgrep  # the reference's grep runs rg
c=$(run "as-edit-test/scratch-helper:$tag" /pause/sleep 3600)
"$py" scripts/anthropic-example-test.py --container "$c" --workdir /work

echo "docker conformance passed"
