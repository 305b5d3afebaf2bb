#!/usr/bin/env bash
# Builds the image layer users copy from: as-edit:<version> and
# as-edit:latest, FROM scratch, holding only /opt/as-edit/as-edit (the
# static x86_64 binary). With --aarch64 also as-edit:<version>-aarch64
# (linux/arm64, the aarch64 binary). No registry is needed.
#   In a Dockerfile: COPY --from=as-edit:0.1.0 /opt/as-edit/as-edit /opt/as-edit/as-edit
# Usage: scripts/image.sh [--bin PATH] [--aarch64]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

bin="" arm=0
while (($#)); do
  case "$1" in
    --bin) bin=$2; shift ;;
    --aarch64) arm=1 ;;
    *) die "unknown argument $1" ;;
  esac
  shift
done
version=$(pkg_version)
if [ -z "$bin" ]; then
  scripts/build-static.sh x86_64-unknown-linux-musl >/dev/null
  bin="dist/as-edit-$version-x86_64-unknown-linux-musl"
fi
[ -f "$bin" ] || die "no binary at $bin"

# build_image BINARY PLATFORM TAG...
build_image() {
  local b=$1 platform=$2; shift 2
  local ctx
  ctx=$(mktemp -d)
  install -D -m 755 "$b" "$ctx/opt/as-edit/as-edit"
  printf 'FROM scratch\nCOPY opt/as-edit/as-edit /opt/as-edit/as-edit\n' >"$ctx/Dockerfile"
  local tags=() t old_ids id
  for t in "$@"; do tags+=(-t "$t"); done
  # The images these tags name now: a rebuild moves the tags, and an old
  # image no tag names any more would stay behind as a dangling <none>.
  old_ids=$(for t in "$@"; do docker image inspect -f '{{.Id}}' "$t" 2>/dev/null || true; done | sort -u)
  # The classic builder: FROM scratch needs no registry and no buildx.
  local out
  out=$(DOCKER_BUILDKIT=0 docker build -q --platform "$platform" "${tags[@]}" "$ctx" 2>&1) \
    || { rm -rf "$ctx"; die "docker build of $* failed: $out"; }
  rm -rf "$ctx"
  for id in $old_ids; do
    # Only an image left without any tag; one a container still uses is
    # refused by the engine (no -f) and kept.
    [ "$(docker image inspect -f '{{len .RepoTags}}' "$id" 2>/dev/null)" = 0 ] || continue
    docker image rm "$id" >/dev/null 2>&1 && echo "removed the previous image ${id#sha256:}" \
      || echo "kept the previous image ${id#sha256:} (still in use)"
  done
  echo "built $* ($platform): $(docker image inspect -f '{{.Size}}' "$1") bytes"
}

build_image "$bin" linux/amd64 "as-edit:$version" as-edit:latest
if ((arm)); then
  arm_bin="dist/as-edit-$version-aarch64-unknown-linux-musl"
  [ -f "$arm_bin" ] || scripts/build-static.sh aarch64-unknown-linux-musl >/dev/null
  build_image "$arm_bin" linux/arm64 "as-edit:$version-aarch64"
fi
