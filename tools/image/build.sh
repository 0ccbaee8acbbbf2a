#!/usr/bin/env bash
# `make image`: builds the one Viewfinder image and writes it as a docker-archive that
# `docker load` and test/cluster/node/load-image.sh read.
#   - With a working Docker engine: docker build (BuildKit), then docker save.
#   - Without one: Debian's buildah (`buildah build --format docker --layers --network host`). The base is
#     BASE_IMAGE when buildah has it or can pull it, else one the project makes itself
#     (tools/image/make-base.sh: debootstrap + Node from the npm registry), cached outside the clone.
# Settings (environment):
#   IMAGE          name:tag of the image (viewfinder:dev)
#   BASE_IMAGE     the Dockerfile's base (node:24-bookworm-slim)
#   IMAGE_ARCHIVE  the docker-archive to write (build/viewfinder-image.tar; empty: none)
#   IMAGE_BUILDER  docker, buildah or auto (docker when its engine answers)
#   BUILD_CA_FILE  a CA bundle the build's npm trusts, given as a build secret and never stored in
#                  the image (default: NODE_EXTRA_CA_CERTS, for a TLS-inspecting proxy the host trusts)
#   VIEWFINDER_CACHE_DIR  where made bases are kept (${XDG_CACHE_HOME:-~/.cache}/viewfinder)
#   BASE_PULL_TIMEOUT     seconds buildah may try to pull BASE_IMAGE before making the base (60)
set -euo pipefail
cd "$(dirname "$0")/../.."

IMAGE=${IMAGE:-viewfinder:dev}
BASE_IMAGE=${BASE_IMAGE:-node:24-bookworm-slim}
IMAGE_ARCHIVE=${IMAGE_ARCHIVE-build/viewfinder-image.tar}
IMAGE_BUILDER=${IMAGE_BUILDER:-auto}
BUILD_CA_FILE=${BUILD_CA_FILE-${NODE_EXTRA_CA_CERTS:-}}
CACHE_DIR=${VIEWFINDER_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/viewfinder}
log() { echo "image: $*" >&2; }

if [ "$IMAGE_BUILDER" = auto ]; then
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then IMAGE_BUILDER=docker; else IMAGE_BUILDER=buildah; fi
fi
if [ -n "$BUILD_CA_FILE" ] && [ ! -r "$BUILD_CA_FILE" ]; then
  log "BUILD_CA_FILE=$BUILD_CA_FILE is not a readable file"
  exit 1
fi
started=$SECONDS
[ -z "$IMAGE_ARCHIVE" ] || mkdir -p "$(dirname "$IMAGE_ARCHIVE")"

case "$IMAGE_BUILDER" in
docker)
  secret=()
  [ -z "$BUILD_CA_FILE" ] || secret=(--secret "id=build-ca,src=$BUILD_CA_FILE")
  log "docker build -t $IMAGE (base $BASE_IMAGE)"
  DOCKER_BUILDKIT=1 docker build --build-arg "BASE_IMAGE=$BASE_IMAGE" "${secret[@]}" -t "$IMAGE" .
  built=$SECONDS
  [ -z "$IMAGE_ARCHIVE" ] || docker save -o "$IMAGE_ARCHIVE" "$IMAGE"
  size=$(docker image inspect -f '{{.Size}}' "$IMAGE")
  ;;
buildah)
  command -v buildah >/dev/null || { log "neither a Docker engine nor buildah: run make image-deps"; exit 1; }
  base=$BASE_IMAGE
  if buildah inspect --type image "$base" >/dev/null 2>&1; then
    log "base $base: in buildah's store"
  elif timeout "${BASE_PULL_TIMEOUT:-60}" buildah pull --quiet "$base" >/dev/null 2>&1; then
    log "base $base: pulled"
  else
    log "base $base cannot be pulled here: using the project's own (debootstrap + Node from npm)"
    base=$(tools/image/make-base.sh "$CACHE_DIR/base" | tail -n 1)
  fi
  # buildah needs the secret to exist: an empty one means "trust nothing more" (the Dockerfile checks).
  ca=$(mktemp)
  trap 'rm -f "$ca"' EXIT
  [ -z "$BUILD_CA_FILE" ] || cat "$BUILD_CA_FILE" >"$ca"
  log "buildah build -t $IMAGE (base $base)"
  # --network host: buildah's own bridge would take 10.88.0.0/16 and needs no CNI set-up this way.
  # --format docker: the OCI format has no HEALTHCHECK.
  buildah build --format docker --layers --network host --build-arg "BASE_IMAGE=$base" --secret "id=build-ca,src=$ca" -t "$IMAGE" .
  built=$SECONDS
  if [ -n "$IMAGE_ARCHIVE" ]; then
    rm -f "$IMAGE_ARCHIVE"
    # Named as Docker would name it, so that a pod asking for IMAGE finds it.
    buildah push --quiet "$IMAGE" "docker-archive:$IMAGE_ARCHIVE:$IMAGE" >/dev/null
  fi
  size=$(buildah images --format '{{.Size}}' "$IMAGE" | head -n 1)
  # The image this build replaced, and the layers only it used, are dangling now: prune them, so
  # that repeated builds (every CI run's real-node leg) do not grow buildah's store. Layers that the
  # new image still uses stay, as the cache of the next build. Each pass removes one level.
  pruned=0
  for _ in $(seq 1 30); do
    removed=$(buildah rmi --prune 2>/dev/null | grep -c . || true)
    [ "$removed" -gt 0 ] || break
    pruned=$((pruned + removed))
  done
  [ "$pruned" -eq 0 ] || log "pruned $pruned dangling images from buildah's store"
  ;;
*)
  log "IMAGE_BUILDER must be docker, buildah or auto (got $IMAGE_BUILDER)"
  exit 1
  ;;
esac

log "built $IMAGE with $IMAGE_BUILDER in $((built - started)) s; image size $size"
[ -z "$IMAGE_ARCHIVE" ] || log "archive $IMAGE_ARCHIVE: $(du -h "$IMAGE_ARCHIVE" | cut -f1) (written in $((SECONDS - built)) s); load it with test/cluster/node/load-image.sh STATE_DIR $IMAGE_ARCHIVE"
